import net from 'node:net';
import type { RunningIcecastListener } from '../../src/ingest/listener';
import type { StartOptions } from '../../src/app/start-app';
import type { TrackFields } from '../../src/domain/track';
import type { TrackStore } from '../../src/store/tracks';
import { startTestServer, type TestServer, type TestServerOptions } from './test-server';
import { until } from './eventually';

// A real svc (HTTP server and Icecast source listener, as `svc serve --icecast-port` wires them)
// and a source client that speaks to it as libshout does over a raw socket.

export interface IcecastTestServer {
  ts: TestServer;
  listener: RunningIcecastListener;
  close(): Promise<void>;
}

export async function startIcecastTestServer(
  password: string,
  options: TestServerOptions = {},
  idleTimeoutMs?: number,
  listenerOptions: StartOptions['icecast'] = {},
): Promise<IcecastTestServer> {
  // Started as `svc serve` starts it: the listener on icecastSource.port, failed passwords counted with the HTTP API's.
  const { icecast, ...rest } = options;
  const ts = await startTestServer({
    ...rest,
    config: { ...(options.config ?? {}), icecastSource: { port: 0, password } },
    icecast: { ...icecast, ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }), ...listenerOptions },
  });
  const listener = ts.server.icecast;
  if (!listener) throw new Error('the app started no Icecast listener');
  return {
    ts,
    listener,
    // The app closes its listener first, then the server.
    close: () => ts.close(),
  };
}

export function basicAuth(password: string, user = 'source'): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export interface SourceConnection {
  socket: net.Socket;
  /** Everything the listener answered so far. */
  answer(): string;
  /** Resolves once the listener has closed the connection. */
  closed: Promise<void>;
}

/** Connects, sends a request head, and waits until the answer's head (or the close) has come. */
export async function connectSource(port: number, head: string): Promise<SourceConnection> {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (piece: Buffer) => (received += piece.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(head);
  await Promise.race([closed, until(() => /\r\n\r\n/.test(received) && !/^HTTP\/1\.1 100 Continue\r\nContent-Length: 0\r\n\r\n$/.test(received))]);
  return { socket, answer: () => received, closed };
}

export function sourceHead(method: 'SOURCE' | 'PUT', mount: string, password: string | null, extra: Record<string, string> = {}): string {
  const headers: Record<string, string> = { Host: '127.0.0.1', 'Content-Type': 'application/ogg', ...extra };
  if (password !== null) headers.Authorization = basicAuth(password);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `${method} ${mount} HTTP/${method === 'SOURCE' ? '1.0' : '1.1'}\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/** Writes a body, honouring backpressure; resolves early if the listener closes the connection. */
export async function writeAll(connection: SourceConnection, body: Buffer, pieceSize = 64 * 1024): Promise<{ sent: number }> {
  let sent = 0;
  let gone = false;
  void connection.closed.then(() => (gone = true));
  for (let at = 0; at < body.length && !gone; at += pieceSize) {
    const piece = body.subarray(at, at + pieceSize);
    const flushed = connection.socket.write(piece);
    sent += piece.length;
    if (!flushed) await Promise.race([new Promise((resolve) => connection.socket.once('drain', resolve)), connection.closed]);
  }
  return { sent };
}

/** The stored tracks once there are `count` of them (the wait is not the assertion). */
export async function waitForTracks(tracks: TrackStore, count: number): Promise<TrackFields[]> {
  await until(async () => (await tracks.since(0, 1000)).length >= count);
  return (await tracks.since(0, 1000)).map((record) => record.metadata);
}
