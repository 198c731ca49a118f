import { WebSocket } from 'ws';
import { until } from '../../helpers/eventually';
import { asObject, request } from '../../helpers/http';
import { openSse, type SseClient } from '../../helpers/sse-client';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/running.md "Behind a proxy": with `trustProxy`, the proxy's sockets are not held to
// limits.maxConnectionsPerAddress (it carries every client), but each real client's streams are,
// once its headers name it (server/guards/client-streams.ts): past the cap a new /v1/events or
// WebSocket of that client is answered 429 TOO_MANY_STREAMS; other clients, plain requests and
// the streams of a client that closed one are not held up.

const CAP = 3;

/** 101 when the WebSocket opened (it stays open until closed), else the status its upgrade got. */
function openWebSocket(url: string, client: string): Promise<{ status: number; socket: WebSocket }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/images/ws`, { headers: { 'X-Forwarded-For': client } });
    socket.on('open', () => resolve({ status: 101, socket }));
    socket.on('unexpected-response', (_request, response) => resolve({ status: response.statusCode ?? 0, socket }));
    socket.on('error', () => undefined);
  });
}

describe('streams per client behind a trusted proxy', () => {
  let t: TestServer | undefined;
  const open: SseClient[] = [];
  const sockets: WebSocket[] = [];
  afterEach(async () => {
    for (const stream of open.splice(0)) stream.close();
    for (const socket of sockets.splice(0)) socket.terminate();
    await t?.close();
    t = undefined;
  });

  const sse = async (url: string, client: string) => {
    const stream = await openSse(`${url}/v1/events`, { 'X-Forwarded-For': client });
    open.push(stream);
    return stream;
  };

  it('When one client behind the proxy opens more streams than the cap, then the next is 429 and other clients still get theirs', async () => {
    t = await startTestServer({ config: { limits: { maxConnectionsPerAddress: CAP }, trustProxy: ['127.0.0.1'] } });
    const url = t.url;
    const first = await sse(url, '198.51.100.1');
    for (let index = 1; index < CAP; index += 1) expect((await sse(url, '198.51.100.1')).status).toBe(200);
    expect(first.status).toBe(200);

    const refused = await request(`${url}/v1/events`, { headers: { 'X-Forwarded-For': '198.51.100.1' } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(asObject(refused.json).error).toBe('Too many streams open from this address, retry later');
    const ws = await openWebSocket(url, '198.51.100.1');
    sockets.push(ws.socket);
    expect(ws.status).toBe(429);
    // Plain requests of that client, and another client's streams, go on.
    expect((await request(`${url}/v1/last`, { headers: { 'X-Forwarded-For': '198.51.100.1' } })).status).toBe(200);
    expect((await sse(url, '198.51.100.2')).status).toBe(200);
    const other = await openWebSocket(url, '198.51.100.2');
    sockets.push(other.socket);
    expect(other.status).toBe(101);

    // Once the client closes one, it may open one again.
    first.close();
    await until(async () => {
      const again = await sse(url, '198.51.100.1');
      return again.status === 200;
    }, 'the client got a stream again after closing one');
    expect(t.logs.some((line) => / 429 /.test(line) && line.includes('/v1/events'))).toBe(true);
  });

  it('When the cap is 0, then a client behind the proxy opens as many streams as it likes', async () => {
    t = await startTestServer({ config: { limits: { maxConnectionsPerAddress: 0 }, trustProxy: ['127.0.0.1'] } });
    for (let index = 0; index <= CAP; index += 1) expect((await sse(t.url, '198.51.100.1')).status).toBe(200);
  });
});
