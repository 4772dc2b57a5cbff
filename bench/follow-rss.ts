// Run in its own process by bench/run.ts, so its peak RSS is the follower's and nothing else's: starts a stand-in
// server over the sshd whose port and paths arrive as JSON in argv[2], follows 1 GB of log with the classifier on, and
// prints the figures as JSON.
import { benchFollowRss } from './diagnosis.ts';

const sshd = JSON.parse(process.argv[2] ?? '{}');
const rows = await benchFollowRss({ ...sshd, start: async () => {}, stop: async () => {}, rotateHostKey: () => {} });
process.stdout.write(`${JSON.stringify(rows)}\n`);
process.exit(0);
