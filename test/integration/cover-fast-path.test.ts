import { makePng } from '../helpers/images';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { pipelineWithoutReading } from '../helpers/attackers';

// GET and HEAD /cover/<key> of an image in memory are answered before Koa (server/fast-paths/cover-fast-path.ts);
// any other spelling of the path (a query string) still goes through the Koa route. Both must
// give the same answer: status, every header but the per-response ones, bytes, access-log line.

describe('GET /cover/<key>: the fast path and the Koa route', () => {
  let t: TestServer;
  let key = '';
  let cover: Buffer;
  beforeAll(async () => {
    t = await startTestServer({ config: { corsOrigins: ['https://overlay.example'] } });
    cover = makePng(40, 30, [250, 120, 0], [10, 40, 200]);
    ({ key } = await t.server.imageStore.put(cover));
  });
  afterAll(() => t.close());

  const headers = { Origin: 'https://overlay.example' };
  const perResponse = new Set(['date', 'x-request-id']);
  const comparable = (all: Headers) => Object.fromEntries([...all].filter(([name]) => !perResponse.has(name)));
  const get = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${t.url}${path}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string> | undefined) } });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  };

  it('When a cover is asked first (a miss: loaded once), then again (in memory), then both answers equal the Koa route', async () => {
    const first = await get(`/cover/${key}`);
    const again = await get(`/cover/${key}`);
    const routed = await get(`/cover/${key}?from=koa`);
    for (const answer of [first, again, routed]) {
      expect(answer.status).toBe(200);
      expect(answer.bytes.equals(cover)).toBe(true);
      expect(comparable(answer.headers)).toEqual(comparable(routed.headers));
    }
    expect(first.headers.get('content-type')).toBe('image/png');
    expect(first.headers.get('access-control-allow-origin')).toBe('https://overlay.example');
    expect(first.headers.get('x-request-id')).not.toBe(again.headers.get('x-request-id'));
    const id = again.headers.get('x-request-id') ?? '';
    expect(t.logs.filter((line) => line.includes(`GET /cover/${key} 200 `) && line.includes(`id=${id}`))).toHaveLength(1);
  });

  it('When the request carries the ETag or another one, then the fast path answers 304 or 200 as the Koa route does', async () => {
    for (const ifNoneMatch of [`"${key}"`, `W/"${key}"`, '"stale"']) {
      const fast = await get(`/cover/${key}`, { headers: { 'If-None-Match': ifNoneMatch } });
      const routed = await get(`/cover/${key}?from=koa`, { headers: { 'If-None-Match': ifNoneMatch } });
      expect(fast.status).toBe(routed.status);
      expect(fast.bytes.equals(routed.bytes)).toBe(true);
      expect(comparable(fast.headers)).toEqual(comparable(routed.headers));
    }
  });

  it('When HEAD asks, then the headers come without a body, as from the Koa route', async () => {
    const fast = await get(`/cover/${key}`, { method: 'HEAD' });
    const routed = await get(`/cover/${key}?from=koa`, { method: 'HEAD' });
    expect(fast.status).toBe(200);
    expect(fast.bytes.length).toBe(0);
    expect(comparable(fast.headers)).toEqual(comparable(routed.headers));
  });

  it('When ten readers pipeline 8 requests each for a cover in memory and stop reading, then a reader that reads still gets it', async () => {
    const stuck = pipelineWithoutReading(t.url, 10, `/cover/${key}`, true);
    const res = await get(`/cover/${key}`);
    expect(res.status).toBe(200);
    expect(res.bytes.equals(cover)).toBe(true);
    await stuck.stop();
  });

  it('When the key is not stored, then the Koa route answers its JSON 404', async () => {
    const missing = await get(`/cover/${'0'.repeat(64)}`);
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.bytes.toString('utf8'))).toHaveProperty('error');
  });
});
