// Processes as /proc shows them, for the tests' checks of what runs.
import { readFileSync } from 'node:fs';

/**
 * Whether a process runs: a zombie (killed, not yet reaped by whoever adopted it) counts as gone, as `kill -0`,
 * which succeeds on zombies, would not say.
 */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}
