// Part src/hosts: owns RemoteHost: SSH and local hosts, known_hosts pinning, argv quoting, HTTP to the servers.
// May import: config, errors.ts, glob.ts, paths.ts.
//
// The seam every remote effect goes through. Implementations take argv arrays, never shell strings; quoting
// happens once, inside (src/hosts/quote.ts).
import type { Duplex } from 'node:stream';

export interface ExecOptions {
  /** Wall-clock limit for the whole command; the channel is closed and a RemoteError(kind: timeout) thrown. */
  timeoutMs?: number;
  /** Written to the command's stdin, then stdin is closed. */
  stdin?: string;
  /** Keep at most this many bytes of stdout/stderr (the tail). Default 1 MiB. */
  maxOutputBytes?: number;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  /** Exit status, or null when the command died of a signal. */
  code: number | null;
  signal: string | null;
}

/** A long-lived command whose stdout arrives as raw chunks (e.g. `tail -F` of a log). */
export interface StreamHandle {
  chunks: AsyncIterable<Buffer>;
  /** Ends the remote command (TERM to its session, then closes the channel). */
  close(): void;
  /** Settles when the command ends, for whatever reason. */
  done: Promise<ExecResult>;
}

export interface HttpRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  /** The machine the host reaches the server on (a Slurm job's compute node); default its own 127.0.0.1. */
  address?: string;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RemoteHost {
  readonly name: string;
  /** Run argv on the host; resolves with its exit status whatever it is (non-zero is not an exception). */
  exec(argv: readonly string[], opts?: ExecOptions): Promise<ExecResult>;
  stream(argv: readonly string[]): StreamHandle;
  /** An HTTP request to 127.0.0.1:port (or req.address) as seen from the host (through an SSH tunnel for remote hosts). */
  http(port: number, req: HttpRequest): Promise<HttpResponse>;
  /**
   * A raw TCP stream to toHost:toPort as seen from the host (an SSH direct-tcpip channel for remote hosts, a socket
   * for the local one): streaming HTTP (SSE), whose bytes must be timed as they arrive where http() buffers the body.
   */
  tunnel(toHost: string, toPort: number): Promise<Duplex>;
  close(): Promise<void>;
}
