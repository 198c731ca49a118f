import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

// A real local HTTP server on 127.0.0.1, port 0, that answers like an outside service and
// records every request it receives, so tests can assert the calls svc made.

export interface RecordedRequest {
  method: string;
  path: string;
  /** Query string (and, for form POSTs, body) parameters; '+' decodes to a space as in forms. */
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Arrival time in milliseconds (high resolution). */
  at: number;
}

export interface FakeReply {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Answer only after this long (a slow service). */
  delayMs?: number;
}

export type FakeRoute = (request: RecordedRequest) => FakeReply;
/** An override answers instead of the service when it returns a reply. */
export type FakeOverride = (request: RecordedRequest) => FakeReply | undefined;

export interface FakeServer {
  name: string;
  url: string;
  requests: RecordedRequest[];
  /** Answer with `override` where it returns a reply (failures, delays), until reset(). */
  override(override: FakeOverride): void;
  /** Adds `ms` to every answer from now on (a far or slow service), until reset(). */
  slowDown(ms: number): void;
  /** Holds every answer from now on until the returned release is called (a marker instead of a delay). */
  hold(): () => void;
  /** Forgets recorded requests, overrides and the added latency. */
  reset(): void;
  close(): Promise<void>;
}

export async function startFake(name: string, route: FakeRoute): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const overrides: FakeOverride[] = [];
  let latencyMs = 0;
  /** Answers held by hold(), sent on release. */
  let held: (() => void)[] | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.timeOrigin + performance.now();
      const url = new URL(req.url ?? '/', 'http://fake.invalid');
      const body = Buffer.concat(chunks).toString('utf8');
      const query: Record<string, string> = Object.fromEntries(url.searchParams);
      if (req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) Object.assign(query, Object.fromEntries(new URLSearchParams(body)));
      const recorded: RecordedRequest = { method: req.method ?? 'GET', path: decodeURIComponent(url.pathname), query, headers: req.headers, body, at };
      requests.push(recorded);
      let reply: FakeReply;
      try {
        reply = overrides.map((override) => override(recorded)).find((candidate) => candidate !== undefined) ?? route(recorded);
      } catch (error) {
        reply = { status: 500, body: `fake ${name} failed: ${String(error)}` };
      }
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, reply.headers ?? {});
        res.end(reply.body ?? '');
      };
      const delayMs = (reply.delayMs ?? 0) + latencyMs;
      if (held) {
        held.push(send);
      } else if (delayMs > 0) {
        const timer = setTimeout(send, delayMs);
        res.on('close', () => clearTimeout(timer));
      } else {
        send();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    name,
    url: `http://127.0.0.1:${port}`,
    requests,
    override: (override) => overrides.unshift(override),
    slowDown(ms) {
      latencyMs = ms;
    },
    hold() {
      const queue: (() => void)[] = [];
      held = queue;
      return () => {
        if (held === queue) held = undefined;
        for (const send of queue.splice(0)) send();
      };
    },
    reset() {
      requests.length = 0;
      overrides.length = 0;
      latencyMs = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): FakeReply {
  return { status, headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers }, body: JSON.stringify(body) };
}

export function redirect(status: number, location: string): FakeReply {
  return { status, headers: { Location: location, 'Content-Type': 'text/plain' }, body: `See: ${location}` };
}

const FIXTURES = path.join(__dirname, '..', 'fixtures');

/** Every fixture of a service by case name (the file name without `.json`). */
export function loadFixtures(service: string): Map<string, unknown> {
  const dir = path.join(FIXTURES, service);
  const fixtures = new Map<string, unknown>();
  for (const file of fs.readdirSync(dir)) {
    if (file.endsWith('.json')) fixtures.set(file.slice(0, -5), JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as unknown);
  }
  return fixtures;
}

export function fixture(service: string, name: string): unknown {
  const found = loadFixtures(service).get(name);
  if (found === undefined) throw new Error(`no fixture ${service}/${name}`);
  return found;
}

export function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
}
