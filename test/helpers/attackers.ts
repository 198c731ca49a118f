import fs from 'node:fs';
import net from 'node:net';

// Resource attackers for the memory tests, from loopback only: raw sockets that pipeline
// requests and never read the answers. bench/lib/attacks.js has the same for the benchmark.

export interface Attack {
  stop(): Promise<void>;
}

/** `count` connections that keep pipelining `GET path` as fast as svc reads them, reading nothing. */
export function pipelineWithoutReading(url: string, count: number, path: string, oneBatch = false): Attack {
  const { hostname, port } = new URL(url);
  const batch = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`.repeat(oneBatch ? 8 : 256));
  const sockets = Array.from({ length: count }, (_, i) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress: `127.0.0.${(i % 10) + 1}` });
    socket.pause();
    socket.on('error', () => undefined);
    const pump = () => {
      while (!socket.destroyed && socket.write(batch) && !oneBatch);
    };
    socket.on('connect', pump);
    if (!oneBatch) socket.on('drain', pump);
    return socket;
  });
  return {
    stop: async () => {
      await Promise.all(sockets.map((socket) => new Promise((resolve) => (socket.destroyed ? resolve(undefined) : socket.once('close', resolve).destroy()))));
    },
  };
}

/** Resident set size of a process, from /proc/<pid>/status (Linux), in bytes. */
export function residentBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match?.[1]) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]) * 1024;
}

/** The highest resident set size of a process over `ms`, sampled every 100 ms. */
export async function peakDuring(pid: number, ms: number): Promise<number> {
  let peak = residentBytes(pid);
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Sampling RSS is the point here: there is no event to wait for.
    await new Promise((resolve) => setTimeout(resolve, 100));
    peak = Math.max(peak, residentBytes(pid));
  }
  return peak;
}
