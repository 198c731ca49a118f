import net from 'node:net';
import { rawRequest } from '../../helpers/raw-http';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// Socket floods (docs/limits-and-load.md "Connections"): before, a slot held by a client that
// never finished its headers was freed only after Node's 60 s default, and 10,000 slow-header
// connections left /v1/status answering 2 of 78 probes.

interface Slow {
  socket: net.Socket;
  closed: Promise<string>;
}

/** A connection from `localAddress` that sends the start of a request head and never ends it. */
function slowHeaders(url: string, localAddress: string, send = 'GET /v1/status HTTP/1.1\r\nHost: localhost\r\n'): Promise<Slow> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress });
    let received = '';
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const closed = new Promise<string>((done) => socket.on('close', () => done(received)));
    socket.once('connect', () => {
      if (send !== '') socket.write(send);
      resolve({ socket, closed });
    });
    socket.once('close', () => resolve({ socket, closed }));
  });
}

describe('slow and silent connections', () => {
  let t: TestServer;
  const open: Slow[] = [];
  beforeAll(async () => {
    t = await startTestServer({ config: { limits: { headersTimeoutSeconds: 2 } } });
  });
  afterEach(() => {
    for (const slow of open.splice(0)) slow.socket.destroy();
  });
  afterAll(() => t.close());

  it('When a head is not finished within limits.headersTimeoutSeconds, then the answer is a JSON 408 and the connection closes', async () => {
    const slow = await slowHeaders(t.url, '127.0.0.1');
    const received = await slow.closed;
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(received).toContain('application/json');
    expect(received.endsWith('{"error":"The request was not received in time"}')).toBe(true);
  });

  it('When a connection sends nothing at all, then it is closed after limits.headersTimeoutSeconds', async () => {
    const silent = await slowHeaders(t.url, '127.0.0.1', '');
    expect(await silent.closed).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('When 2,000 slow-header connections come from 20 loopback addresses, then a fresh client still gets /v1/status', async () => {
    for (let index = 0; index < 2000; index += 1) open.push(await slowHeaders(t.url, `127.0.0.${(index % 20) + 1}`));
    const answers: number[] = [];
    for (let probe = 0; probe < 5; probe += 1) answers.push((await rawRequest(`${t.url}/v1/status`, { localAddress: '127.0.0.200' })).status);
    expect(answers).toEqual([200, 200, 200, 200, 200]);
    // And the slots are freed by the head timeout, not held for Node's 60 s default.
    const ends = await Promise.all(open.slice(0, 100).map((slow) => slow.closed));
    expect(ends.every((received) => received.startsWith('HTTP/1.1 408 '))).toBe(true);
  }, 60_000);

  it('When the Expect header is not 100-continue, then the answer is a JSON 417', async () => {
    const response = await rawRequest(`${t.url}/v1/status`, { headers: { Expect: 'something-else' } });
    expect(response.status).toBe(417);
    expect(JSON.parse(response.text)).toEqual({ error: 'Unsupported Expect header (only 100-continue is understood)' });
  });
});

describe('at limits.maxConnections', () => {
  let t: TestServer;
  beforeAll(async () => {
    // A grace of 0: the slow connections are old enough to make room as soon as they are open
    // (a slowloris holds its connections far longer than the default second).
    t = await startTestServer({ config: { limits: { maxConnections: 20, maxConnectionsPerAddress: 0 } }, connections: { silentGraceMs: 0 } });
  });
  afterAll(() => t.close());

  it('When every slot is held by a connection still without its head, then the oldest is closed and a fresh client is answered', async () => {
    const slow: Slow[] = [];
    for (let index = 0; index < 20; index += 1) slow.push(await slowHeaders(t.url, '127.0.0.1'));
    const response = await rawRequest(`${t.url}/v1/status`, { localAddress: '127.0.0.2' });
    expect(response.status).toBe(200);
    expect(await slow[0]?.closed).toBe('');
    expect(t.logs.some((line) => line.includes('closed the oldest connection still without a request'))).toBe(true);
    for (const connection of slow) connection.socket.destroy();
  });
});
