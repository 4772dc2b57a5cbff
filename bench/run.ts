// npm run bench: measured figures, each beside a reference measured in the same run.
import { startSshd } from '../test/helpers/sshd.ts';
import { benchEngine } from './engine.ts';
import { printTable } from './stats.ts';

const sshd = await startSshd();
try {
  printTable(
    'engine (issue 2): SSH pooling, probe latency, readiness delay; OpenSSH sshd on 127.0.0.1, SGLang stand-in',
    await benchEngine(sshd),
  );
} finally {
  await sshd.stop();
}
