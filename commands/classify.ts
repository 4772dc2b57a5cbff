import { UserError } from '../src/errors.ts';
import { pathString } from '../src/paths.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'classify',
  summary: 'name the crash in an SGLang log from anywhere: class, phase, root lines (terminal only)',
  usage: 'classify FILE|- [--json]',
  examples: ['classify ~/sglang-glm5.log', 'classify server.log --json', 'classify -'],
  positionals: ['file'],
  switches: ['json'],
  args: (z) =>
    z.object({ file: pathString(z).describe('a log file, or - for standard input'), json: z.boolean().optional() }),
  effect: 'read',
  async run(ctx, { file, json }) {
    const { knownUpstream } = await import('../src/corpus/similar.ts');
    const { diagnoseFile, diagnoseStream, renderDiagnosis } = await import('../src/logs/classify/index.ts');
    const { catalogFromConfig } = await import('../src/lifecycle/classifier.ts');
    // It reads files of the machine the bot runs on: fine for the person at the terminal, not for a chat.
    if (ctx.origin !== 'terminal')
      throw new UserError(
        'classify reads files on the bot machine, so it is terminal-only',
        "use logs to see an attempt's log",
      );
    const catalog = catalogFromConfig(ctx.engine.loaded.config.signatures);
    let d: Awaited<ReturnType<typeof diagnoseFile>>;
    if (file === '-') {
      if (!ctx.stdin)
        throw new UserError('no standard input to read', 'pipe a log in: cat server.log | glm classify -');
      d = await diagnoseStream(ctx.stdin, { catalog });
    } else {
      try {
        d = await diagnoseFile(file, { catalog });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR')
          throw new UserError(`cannot read ${file}: ${code}`, 'give the path of a log file');
        throw e;
      }
    }
    const root = d.classification.evidence[0]?.text;
    const known = root && d.classification.category !== 'none' ? knownUpstream().similar(root) : [];
    if (json) {
      const data = { ...d.classification, reason: d.reason, known };
      return { text: JSON.stringify(data, null, 2), data };
    }
    return { text: renderDiagnosis(d, known), data: d.classification, exitCode: 0 };
  },
});

export default command;
