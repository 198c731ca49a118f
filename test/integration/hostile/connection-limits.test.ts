import net from 'node:net';
import type { Enricher } from '../../../src/enrich/enricher';
import { rawRequest } from '../../helpers/raw-http';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/decisions.md "Hostile clients and browsers": limits.maxConnections, maxConnectionsPerAddress,
// and at most 8 pipelined requests in flight per connection. The second loopback address
// (127.0.0.2, Linux routes all of 127/8 to lo) plays the innocent client.

const STATUS_REQUEST = 'GET /v1/status HTTP/1.1\r\nHost: localhost\r\n\r\n';

interface Held {
  socket: net.Socket;
  closed: Promise<void>;
}

/** A keep-alive connection from `localAddress` that has had one answer, so the server counted it. */
function holdConnection(url: string, localAddress: string): Promise<Held> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress });
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('error', () => undefined);
    socket.once('connect', () => socket.write(STATUS_REQUEST));
    socket.once('data', () => resolve({ socket, closed }));
    void closed.then(() => reject(new Error(`connection from ${localAddress} closed before an answer`)));
  });
}

/** A connection the server should close at once: resolves with the bytes it got before closing. */
function refusedConnection(url: string, localAddress: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress });
    let received = '';
    socket.on('error', () => undefined);
    socket.once('connect', () => socket.write(STATUS_REQUEST));
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('close', () => resolve(received));
  });
}

describe('connection caps', () => {
  let t: TestServer;
  const held: Held[] = [];
  // A server per test: the server sees a client's close a moment after the client does.
  beforeEach(async () => {
    t = await startTestServer({ config: { limits: { maxConnections: 8, maxConnectionsPerAddress: 5 } } });
  });
  afterEach(async () => {
    for (const connection of held.splice(0)) {
      connection.socket.destroy();
      await connection.closed;
    }
    await t.close();
  });

  it('When 127.0.0.1 holds its 5 connections, then its sixth is closed at once, 127.0.0.2 is still served, and the log says why once', async () => {
    for (let i = 0; i < 5; i += 1) held.push(await holdConnection(t.url, '127.0.0.1'));
    expect(await refusedConnection(t.url, '127.0.0.1')).toBe('');
    expect(await refusedConnection(t.url, '127.0.0.1')).toBe('');
    const res = await rawRequest(`${t.url}/v1/status`, { localAddress: '127.0.0.2' });
    expect(res.status).toBe(200);
    const reports = t.logs.filter((line) => line.includes('limits.maxConnectionsPerAddress'));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toContain('connection from 127.0.0.1 refused: 5 connections open');
  });

  it('When a held connection closes, then its address may connect again', async () => {
    for (let i = 0; i < 5; i += 1) held.push(await holdConnection(t.url, '127.0.0.1'));
    const first = held.shift();
    first?.socket.destroy();
    await first?.closed;
    // The server learns of the close from the FIN a moment later: each refused attempt is a
    // full round trip, so a few suffice.
    let admitted: Held | undefined;
    for (let attempt = 0; attempt < 50 && !admitted; attempt += 1) {
      admitted = await holdConnection(t.url, '127.0.0.1').catch(() => undefined);
    }
    expect(admitted).toBeDefined();
    if (admitted) held.push(admitted);
  });

  it('When 8 idle connections are open in all, then a ninth from a fresh address is served and the busiest address loses its oldest idle one', async () => {
    for (let i = 0; i < 5; i += 1) held.push(await holdConnection(t.url, '127.0.0.1'));
    for (let i = 0; i < 3; i += 1) held.push(await holdConnection(t.url, '127.0.0.2'));
    const fresh = await holdConnection(t.url, '127.0.0.3');
    held.push(fresh);
    await held[0]?.closed;
    expect(held.slice(1, 8).every((connection) => !connection.socket.destroyed)).toBe(true);
    expect(t.logs.some((line) => line.includes('closed the oldest idle connection of the address holding the most (from 127.0.0.1)'))).toBe(true);
  });
});

/** An open /v1/events stream from `localAddress`: a connection answering a request, never idle. */
function holdStream(url: string, localAddress: string): Promise<Held> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress });
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('error', () => undefined);
    socket.once('connect', () => socket.write('GET /v1/events HTTP/1.1\r\nHost: localhost\r\n\r\n'));
    socket.once('data', () => resolve({ socket, closed }));
    void closed.then(() => reject(new Error(`stream from ${localAddress} closed before it opened`)));
  });
}

/** Six fresh connections at once (three each from 127.0.0.3 and 127.0.0.4): what each got before its close. */
function burstOfSix(url: string): Promise<string[]> {
  const { hostname, port } = new URL(url);
  const one = (localAddress: string) =>
    new Promise<string>((resolve) => {
      const socket = net.connect({ host: hostname, port: Number(port), localAddress });
      let received = '';
      socket.on('error', () => undefined);
      socket.once('connect', () => socket.write('GET /v1/status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'));
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.on('close', () => resolve(received));
    });
  return Promise.all(['127.0.0.3', '127.0.0.3', '127.0.0.3', '127.0.0.4', '127.0.0.4', '127.0.0.4'].map(one));
}

describe('a burst of fresh connections at limits.maxConnections', () => {
  let t: TestServer;
  const held: Held[] = [];
  beforeEach(async () => {
    t = await startTestServer({ config: { limits: { maxConnections: 8, maxConnectionsPerAddress: 5 } } });
  });
  afterEach(async () => {
    for (const connection of held.splice(0)) {
      connection.socket.destroy();
      await connection.closed;
    }
    await t.close();
  });

  it('When 8 idle connections are open and 6 fresh ones come at once, then every one of the 6 is served (they do not close each other)', async () => {
    for (let i = 0; i < 5; i += 1) held.push(await holdConnection(t.url, '127.0.0.1'));
    for (let i = 0; i < 3; i += 1) held.push(await holdConnection(t.url, '127.0.0.2'));
    const answers = await burstOfSix(t.url);
    expect(answers.map((answer) => answer.split('\r\n')[0])).toEqual(answers.map(() => 'HTTP/1.1 200 OK'));
  });

  it('When 7 streams are open and 6 fresh connections come at once, then each is served or answered 503 with Retry-After, none closed bare', async () => {
    for (let i = 0; i < 5; i += 1) held.push(await holdStream(t.url, '127.0.0.1'));
    for (let i = 0; i < 2; i += 1) held.push(await holdStream(t.url, '127.0.0.2'));
    const answers = await burstOfSix(t.url);
    // One slot is free; the others come while it is taken (or after an earlier one of the six closed).
    const heads = answers.map((answer) => answer.split('\r\n')[0]);
    expect(heads.filter((head) => head !== 'HTTP/1.1 200 OK' && head !== 'HTTP/1.1 503 Service Unavailable')).toEqual([]);
    const refused = answers.filter((answer) => answer.startsWith('HTTP/1.1 503'));
    for (const answer of refused) {
      expect(answer).toContain('\r\nRetry-After: 1\r\n');
      expect(answer).toContain('{"error":"Server busy: too many connections open, retry shortly"}');
    }
    // The streams were not touched.
    expect(held.every((connection) => !connection.socket.destroyed)).toBe(true);
    if (refused.length > 0) expect(t.logs.some((line) => line.includes('connection answered 503: 8 connections open (limits.maxConnections)'))).toBe(true);
  });
});

describe('maxConnectionsPerAddress 0 (behind a proxy)', () => {
  let t: TestServer;
  afterAll(() => t.close());

  it('When the per-address cap is off, then one address may hold more than 512 connections', async () => {
    t = await startTestServer({ config: { limits: { maxConnectionsPerAddress: 0 } } });
    const connections: Held[] = [];
    for (let i = 0; i < 520; i += 1) connections.push(await holdConnection(t.url, '127.0.0.1'));
    for (const connection of connections) connection.socket.destroy();
    await Promise.all(connections.map((connection) => connection.closed));
  });
});

describe('pipelined requests in flight per connection', () => {
  let t: TestServer;
  let started = 0;
  const waiters: (() => void)[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const eighthStarted = new Promise<void>((resolve) => waiters.push(resolve));
  // Each submission waits in enrichment until the test opens the gate.
  const blocking: Enricher = {
    name: 'test-gate',
    enrich: async () => {
      started += 1;
      if (started === 8) for (const wake of waiters) wake();
      await gate;
      return null;
    },
  };
  beforeAll(async () => {
    t = await startTestServer({ plan: [[blocking]], config: { enrichment: { enabled: true }, processingTimeoutSeconds: 30 } });
  });
  afterAll(() => t.close());

  it('When 20 submissions are pipelined on one connection, then 8 are processed at a time and all 20 are answered in order', async () => {
    const { hostname, port } = new URL(t.url);
    const socket = net.connect(Number(port), hostname);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const requests = Array.from({ length: 20 }, (_, i) => `GET /v1/remoteinput?artist=A&title=T${i} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    socket.write(requests.join(''));
    await eighthStarted;
    // The ninth would start in the same turn if it were admitted; give the loop a few turns.
    for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(started).toBe(8);
    release();
    const allAnswered = new Promise<void>((resolve) => {
      socket.on('data', () => {
        if ((received.match(/HTTP\/1\.1 200/g) ?? []).length === 20) resolve();
      });
    });
    await allAnswered;
    socket.destroy();
    expect(started).toBe(20);
    const titles = [...received.matchAll(/"title":"(T\d+)"/g)].map((match) => match[1]);
    expect(titles).toEqual(Array.from({ length: 20 }, (_, i) => `T${i}`));
  });
});
