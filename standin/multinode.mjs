// Multi-node basics (--nnodes N --node-rank R --dist-init-addr HOST:PORT): the head (rank 0) listens on the
// dist-init port and waits for the N-1 workers before loading; a worker connects (retrying) and fails like
// torch.distributed's TCPStore when the head stays unreachable. After the rendezvous each side watches the link and
// crashes with gloo's "Connection closed by peer" if the other side goes away.

import net from 'node:net';
import { distInitFailure } from './messages.mjs';

function splitAddr(addr) {
  const s = addr ?? '127.0.0.1:20000';
  const i = s.lastIndexOf(':');
  return { host: s.slice(0, i) || '127.0.0.1', port: Number.parseInt(s.slice(i + 1), 10) || 20000 };
}

/**
 * @param {any} cfg
 * @param {number} timeoutMs
 * @param {(tracebackText: string) => void} onFail
 * @param {() => void} onPeerLost
 */
export function headRendezvous(cfg, timeoutMs, onFail, onPeerLost) {
  const { host, port } = splitAddr(cfg.distInitAddr);
  const need = cfg.nnodes - 1;
  const peers = new Set();
  let done = false;
  return new Promise((resolve) => {
    const server = net.createServer((sock) => {
      sock.setEncoding('utf8');
      let buf = '';
      sock.on('data', (d) => {
        buf += d;
        if (!buf.includes('\n') || peers.has(sock)) return;
        peers.add(sock);
        if (done) {
          sock.write('ok\n');
        } else if (peers.size >= need) {
          done = true;
          clearTimeout(timer);
          for (const p of peers) p.write('ok\n');
          resolve({ server, peers });
        }
      });
      sock.on('error', () => {});
      sock.on('close', () => {
        if (done && peers.has(sock)) onPeerLost();
        peers.delete(sock);
      });
    });
    server.on('error', (e) => {
      onFail(
        distInitFailure(
          `torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: ${port}, useIpv6: false, code: -98, name: ${e.code ?? 'EADDRINUSE'}, message: address already in use`,
        ),
      );
    });
    server.listen(port, host);
    const timer = setTimeout(() => {
      if (done) return;
      const secs = Math.round(timeoutMs / 1000) + 1;
      onFail(
        distInitFailure(
          `torch.distributed.DistStoreError: Timed out after ${secs} seconds waiting for clients. ${peers.size + 1}/${cfg.nnodes} clients joined.`,
        ),
      );
    }, timeoutMs);
  });
}

/**
 * @param {any} cfg
 * @param {number} timeoutMs
 * @param {(tracebackText: string) => void} onFail
 * @param {() => void} onPeerLost
 */
export function workerRendezvous(cfg, timeoutMs, onFail, onPeerLost) {
  const { host, port } = splitAddr(cfg.distInitAddr);
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve) => {
    let joined = false;
    const attempt = () => {
      if (Date.now() > deadline) {
        onFail(
          distInitFailure(
            `torch.distributed.DistNetworkError: The client socket has timed out after ${Math.round(timeoutMs)}ms while trying to connect to (${host}, ${port}).`,
          ),
        );
        return;
      }
      const sock = net.connect({ host, port });
      sock.setEncoding('utf8');
      let buf = '';
      sock.on('connect', () => sock.write(`rank ${cfg.nodeRank}\n`));
      sock.on('data', (d) => {
        buf += d;
        if (!joined && buf.includes('ok\n')) {
          joined = true;
          resolve({ sock });
        }
      });
      sock.on('error', () => {});
      sock.on('close', () => {
        if (joined) onPeerLost();
        else setTimeout(attempt, Math.min(200, Math.max(10, timeoutMs / 50)));
      });
    };
    attempt();
  });
}
