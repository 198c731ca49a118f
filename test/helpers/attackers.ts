import fs from 'node:fs';
import net from 'node:net';
import { until } from './eventually';

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

/** Longer than any window: the poll fails only if the process stops answering /proc. */
const HANG_GUARD_MS = 10_000;
/** How often the resident set size is read during an attack. */
const SAMPLE_MS = 100;

/**
 * The highest resident set size of a process over an attack's window of `ms`, read every
 * SAMPLE_MS: a measurement over the window (there is no event for "the heap grew"), through the
 * tests' one poll (test/helpers/eventually.ts until); the bound asserted is on bytes, never on time.
 */
export async function peakDuring(pid: number, ms: number): Promise<number> {
  let peak = residentBytes(pid);
  const end = Date.now() + ms;
  await until(
    () => {
      peak = Math.max(peak, residentBytes(pid));
      return Date.now() >= end;
    },
    `the attack's ${ms} ms window ended`,
    ms + HANG_GUARD_MS,
    SAMPLE_MS,
  );
  return peak;
}
