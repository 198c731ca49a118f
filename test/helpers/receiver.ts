import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

// Local targets for the outputs (docs/outputs.md): an HTTP receiver that records every request
// and answers from a script, and a black hole that accepts TCP connections and never answers.

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Answers given in order before the default 200 `{}` (or `answer`'s). */
  script(...replies: Reply[]): void;
  answer: (request: Received) => Reply;
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const scripted: Reply[] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: performance.now() };
      received.push(request);
      const reply = scripted.shift() ?? receiver.answer(request);
      res.writeHead(reply.status, { 'content-type': 'application/json', connection: 'close', ...reply.headers });
      res.end(reply.body ?? '{}');
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actualPort = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${actualPort}`,
    port: actualPort,
    received,
    script: (...replies) => scripted.push(...replies),
    answer: () => ({ status: 200 }),
    waitFor: (count, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(received.slice(0, count));
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${received.length} of ${count} requests arrived within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

export interface BlackHole {
  url: string;
  /** Connections accepted and still open. */
  open: () => number;
  accepted: () => number;
  close(): Promise<void>;
}

/** Accepts connections and reads them, but never writes a byte. */
export async function startBlackHole(): Promise<BlackHole> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    open: () => sockets.size,
    accepted: () => accepted,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
