// The bot's own machine as a host: argv runs with spawn (no shell) in an allow-listed environment (child-env.ts),
// HTTP goes straight to 127.0.0.1.
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { RemoteError } from '../errors.ts';
import { childEnv } from './child-env.ts';
import { httpRequest } from './http.ts';
import { ChunkQueue, TailBuffer } from './output.ts';
import type { ExecOptions, ExecResult, HttpRequest, HttpResponse, RemoteHost, StreamHandle } from './types.ts';

export function createLocalHost(name: string): RemoteHost {
  return {
    name,
    exec(argv: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
      const [cmd, ...args] = argv;
      if (!cmd) return Promise.reject(new Error('empty argv'));
      return new Promise((resolve, reject) => {
        const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: childEnv() });
        const max = opts.maxOutputBytes ?? 1 << 20;
        const out = new TailBuffer(max);
        const err = new TailBuffer(max);
        child.stdout.on('data', (d: Buffer) => out.push(d));
        child.stderr.on('data', (d: Buffer) => err.push(d));
        let timer: NodeJS.Timeout | undefined;
        if (opts.timeoutMs) {
          timer = setTimeout(() => {
            child.kill('SIGKILL');
            reject(
              new RemoteError(`command timed out after ${opts.timeoutMs} ms`, { host: name, argv, kind: 'timeout' }),
            );
          }, opts.timeoutMs);
        }
        child.on('error', (e) => {
          clearTimeout(timer);
          reject(new RemoteError(`cannot run ${cmd}: ${e.message}`, { host: name, argv, kind: 'exec' }));
        });
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          resolve({ stdout: out.toString(), stderr: err.toString(), code, signal });
        });
        child.stdin.on('error', () => {});
        child.stdin.end(opts.stdin ?? '');
      });
    },
    stream(argv: readonly string[]): StreamHandle {
      const [cmd, ...args] = argv;
      const queue = new ChunkQueue();
      // detached: the command leads its own process group, so close() reaches its children too (like a TERM
      // over SSH reaches the session's group).
      const child = spawn(cmd ?? 'false', args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: childEnv() });
      const err = new TailBuffer(64 * 1024);
      queue.from(child.stdout);
      child.stderr.on('data', (d: Buffer) => err.push(d));
      const done = new Promise<ExecResult>((resolve) => {
        child.on('error', (e) => {
          queue.end(e);
          resolve({ stdout: '', stderr: e.message, code: 127, signal: null });
        });
        child.on('close', (code, signal) => {
          queue.end();
          resolve({ stdout: '', stderr: err.toString(), code, signal });
        });
      });
      return {
        chunks: queue,
        done,
        close() {
          if (child.pid !== undefined && child.exitCode === null) {
            try {
              process.kill(-child.pid, 'SIGTERM');
            } catch {
              // already gone
            }
          }
        },
      };
    },
    http(port: number, req: HttpRequest): Promise<HttpResponse> {
      return httpRequest(req, { host: req.address ?? '127.0.0.1', port });
    },
    tunnel(toHost: string, toPort: number): Promise<Duplex> {
      return new Promise((resolve, reject) => {
        const s = connect(toPort, toHost);
        s.once('connect', () => {
          s.off('error', reject);
          resolve(s);
        });
        s.once('error', reject);
      });
    },
    async close() {},
  };
}
