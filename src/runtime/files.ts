// Files a command makes (a chart): written under the data directory's charts/, returned in the command's data as
// `files` (the scheduler posts them in its report's thread), and, asked from Slack, queued through the outbox as an
// upload to the asker's channel.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandContext } from './define.ts';

export interface OutputFile {
  filename: string;
  path: string;
  title: string;
}

export function chartPath(ctx: CommandContext, filename: string): string {
  const dir = join(ctx.engine.loaded.dataDir, 'charts');
  mkdirSync(dir, { recursive: true });
  return join(dir, filename);
}

/** Writes `png` (unless already at `file.path`) and queues it for the Slack asker; `key` makes the upload once-only. */
export function shareFile(ctx: CommandContext, key: string, file: OutputFile, png: Buffer, write = true): OutputFile {
  if (write) writeFileSync(file.path, png);
  if (ctx.origin === 'slack' && ctx.identity?.channel) {
    ctx.engine.outbox.enqueue({
      key,
      kind: 'upload',
      channel: ctx.identity.channel,
      payload: { filename: file.filename, title: file.title, content: png.toString('base64'), encoding: 'base64' },
      at: ctx.engine.clock.now(),
    });
  }
  return file;
}
