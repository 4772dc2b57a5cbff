// After the whole run: no stand-in server started by a test outlives it, even when a test failed before its own
// cleanup. Only servers whose run directory is a test's temp work dir are touched.
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  return () => {
    const marker = `glm-server ${join(tmpdir(), 'glm-work-')}`;
    const rows = execFileSync('ps', ['-eo', 'pgid=,args='], { encoding: 'utf8' }).split('\n');
    const groups = new Set(rows.filter((r) => r.includes(marker)).map((r) => Number(r.trim().split(/\s+/)[0])));
    for (const g of groups) {
      try {
        process.kill(-g, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
}
