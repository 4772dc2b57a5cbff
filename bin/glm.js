#!/usr/bin/env -S node --max-semi-space-size=2
// Runs the compiled JavaScript in dist/ (built by `npm ci` through the package's prepare script, or `npm run build`):
// no TypeScript is compiled at start-up, so a one-shot `glm help` answers at once.
// --max-semi-space-size=2 (MB): following a busy log allocates short-lived strings fast, and V8's default young
// generation then grows to ~48 MB of resident garbage; at 2 MB the bot following 1 GB of log peaks ~30 MB lower at the
// same throughput (npm run bench). The Docker image sets it through NODE_OPTIONS, as `node bin/glm.js` skips this line.
import { existsSync } from 'node:fs';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('glm: the compiled code (dist/) is missing: run `npm run build` (npm ci runs it too)\n');
  process.exit(2);
}
await import(main.href);
