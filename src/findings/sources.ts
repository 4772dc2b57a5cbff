// Reading a knowledge base and telling whether it changed: local files through fs, files on a GPU host through
// RemoteHost.exec (argv only). The change marker is cheap (stat), so it can be checked before searches and the file
// itself read only when it moved.
import { readFile, stat } from 'node:fs/promises';
import { RemoteError } from '../errors.ts';
import { HOME_PATH_SH, isHomePath } from '../hosts/quote.ts';
import type { RemoteHost } from '../hosts/types.ts';
import { localPath } from '../paths.ts';

export interface FindingsSource {
  /** Shown with each excerpt (`team`, `gpu1-research`). */
  name: string;
  /** A local path, or a path on `host` (relative to the login directory; `~/` allowed). */
  path: string;
  /** Web address of the same file (a GitHub blob URL), for `#L10-L17` links in excerpts. */
  url?: string;
  /** Where the file lives; absent for a file on the bot's own machine. */
  host?: RemoteHost;
}

export interface SourceReader {
  /** Changes whenever the file does (mtime and size). */
  stamp(): Promise<string>;
  read(): Promise<string>;
}

export interface ReaderOptions {
  /** Relative local paths are resolved against this (the config file's directory). */
  baseDir: string;
  execTimeoutMs: number;
  maxBytes: number;
}

export function readerFor(src: FindingsSource, opts: ReaderOptions): SourceReader {
  return src.host ? remoteReader(src.host, src.path, opts) : localReader(localPath(src.path, opts.baseDir), opts);
}

function localReader(path: string, opts: ReaderOptions): SourceReader {
  return {
    async stamp() {
      const s = await stat(path);
      // The inode too: an editor that saves by rename can keep mtime and size within the same millisecond.
      return `${s.mtimeMs}:${s.size}:${s.ino}`;
    },
    async read() {
      const s = await stat(path);
      if (s.size > opts.maxBytes) throw new Error(`${path} is ${s.size} bytes, over the ${opts.maxBytes}-byte limit`);
      return readFile(path, 'utf8');
    },
  };
}

// `~/` is not expanded when argv reaches the remote shell quoted, so a path that starts with it goes through a fixed
// script that expands it from $HOME; the path itself is only ever a positional argument, never shell text.
const EXPAND = `${HOME_PATH_SH}\np=$(home_path "$1");`;

export function remoteArgv(op: 'cat' | 'stat', path: string): string[] {
  const tilde = isHomePath(path);
  if (op === 'cat') return tilde ? ['sh', '-c', `${EXPAND} cat -- "$p"`, 'glm-cat', path] : ['cat', '--', path];
  return tilde
    ? ['sh', '-c', `${EXPAND} stat -c %Y:%s -- "$p"`, 'glm-stat', path]
    : ['stat', '-c', '%Y:%s', '--', path];
}

function remoteReader(host: RemoteHost, path: string, opts: ReaderOptions): SourceReader {
  const run = async (argv: string[], maxBytes: number) => {
    const r = await host.exec(argv, { timeoutMs: opts.execTimeoutMs, maxOutputBytes: maxBytes });
    if (r.code !== 0) {
      throw new RemoteError(`cannot read ${path} on ${host.name}`, {
        host: host.name,
        argv,
        exitCode: r.code,
        stderrTail: r.stderr.slice(-500),
        kind: 'exec',
        hint: 'check the findings source path in the config (relative paths start at the login directory)',
      });
    }
    return r.stdout;
  };
  return {
    async stamp() {
      return (await run(remoteArgv('stat', path), 4096)).trim();
    },
    async read() {
      // One byte over the limit tells a file that is too large from one that fits exactly (exec keeps the tail).
      const text = await run(remoteArgv('cat', path), opts.maxBytes + 1);
      if (Buffer.byteLength(text) > opts.maxBytes) {
        throw new RemoteError(`${path} on ${host.name} is over the ${opts.maxBytes}-byte limit`, {
          host: host.name,
          kind: 'exec',
        });
      }
      return text;
    },
  };
}
