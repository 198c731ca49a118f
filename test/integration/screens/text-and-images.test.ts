import type { Enricher } from '../../../src/enrich/enricher';
import { TRANSPARENT_PNG_BASE64 } from '../../../src/domain/image';
import { postJson, request } from '../../helpers/http';
import { runCli } from '../../helpers/run-cli';
import { MAGIC, makePng } from '../../helpers/images';
import { serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// GET /v1/last.txt, /index.txt, /cover.png and /artist*.png against a real server: the plain
// text line for chat bots and the current images for OBS sources, with nothing playing and
// with a track, their ETags and 304s, and a cover change seen at once.

const TRANSPARENT = Buffer.from(TRANSPARENT_PNG_BASE64, 'base64');
const IMAGE_PATHS = ['/cover.png', '/artistthumb.png', '/artistbanner.png', '/artistlogo.png', '/artistfanart.png'];
const firstCover = makePng(40, 40, [200, 20, 20], [20, 20, 200]);
const jpegCover = Buffer.concat([MAGIC.jpeg, Buffer.alloc(500, 7)]);
const thumb = makePng(30, 30, [10, 200, 10], [0, 0, 0]);

async function bytesOf(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers: { connection: 'close', ...headers } });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}

/** "Finds" an artist thumbnail on the local image host for every track. */
function thumbnailFrom(host: ImageHost): Enricher {
  return { name: 'test-thumbs', enrich: async () => ({ images: [{ category: 'thumbnail', url: `${host.url}/thumb.png`, source: 'test-thumbs' }] }) };
}

describe('plain text and current images', () => {
  let host: ImageHost;
  let t: TestServer;

  beforeAll(async () => {
    host = await startImageHost();
    host.route('/first.png', serveBytes(firstCover, 'image/png'));
    host.route('/second.jpg', serveBytes(jpegCover, 'image/jpeg'));
    host.route('/thumb.png', serveBytes(thumb, 'image/png'));
    t = await startTestServer({ config: { coverFetch: { allowPrivateAddresses: true } }, plan: [[thumbnailFrom(host)]] });
  });
  afterAll(async () => {
    await t.close();
    await host.close();
  });

  describe('When nothing is playing', () => {
    test.each(['/v1/last.txt', '/index.txt', '/v1/last.txt?format={{artist}}'])('then %s is 200 text/plain with an empty body and CORS', async (path) => {
      const res = await request(`${t.url}${path}`, { headers: { Origin: 'http://overlay.example' } });
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('etag')).toMatch(/^"/);
    });

    test.each(IMAGE_PATHS)('then %s is a 1x1 transparent PNG, never a 404', async (path) => {
      const res = await bytesOf(`${t.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.body.equals(TRANSPARENT)).toBe(true);
      // PNG IHDR: width and height are 1.
      expect([res.body.readUInt32BE(16), res.body.readUInt32BE(20)]).toEqual([1, 1]);
      const again = await bytesOf(`${t.url}${path}`, { 'If-None-Match': res.headers.get('etag') ?? '' });
      expect(again.status).toBe(304);
    });
  });

  describe('When a track with a cover is playing', () => {
    beforeAll(async () => {
      const res = await postJson(`${t.url}/v1/remoteinput`, {
        artist: 'Daft Punk',
        title: 'One More Time',
        album: 'Discovery',
        coverurl: `${host.url}/first.png`,
      });
      expect(res.status).toBe(200);
      await t.server.images.idle();
    });

    test.each(['/v1/last.txt', '/index.txt', '/v1/last.txt?x=1'])('then %s is "Artist - Title", one line', async (path) => {
      const res = await request(`${t.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.text).toBe('Daft Punk - One More Time');
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
    });

    test('then a ?format= with no field svc knows is a 400 with the message `svc last --format` gives, not an empty line', async () => {
      const res = await request(`${t.url}/v1/last.txt?format=${encodeURIComponent('{{artsit}}')}`);
      expect(res.status).toBe(400);
      const cli = await runCli(['last', '--format', '{{artsit}}', '--url', t.url]);
      expect(cli.code).toBe(2);
      const cliMessage = /--format: (.+)/.exec(cli.stderr)?.[1];
      expect(cliMessage).toMatch(/names no field svc knows/);
      expect((res.json as { error: string }).error).toBe(`Invalid 'format': ${cliMessage ?? ''}`);
    });

    test.each(['{constructor}', '{toString}', '{valueOf}', '{{title}} {__proto__}'])('then ?format=%s names no track field: 400, never 500', async (format) => {
      const res = await request(`${t.url}/v1/last.txt?format=${encodeURIComponent(format)}`);
      expect(res.status).toBe(400);
      expect((res.json as { error: string }).error).toMatch(/^Invalid 'format': .* is not a track field/);
    });

    test('then ?format= takes {field} and {{field}} alike, and a missing field renders empty', async () => {
      const format = '{{title}} by {artist} [{{nothing}}] #{dbid}';
      const res = await request(`${t.url}/v1/last.txt?format=${encodeURIComponent(format)}`);
      const last = await request(`${t.url}/v1/last`);
      expect(res.text).toBe(`One More Time by Daft Punk #${String((last.json as { dbid: number }).dbid)}`);
    });

    test('then a matching If-None-Match is a 304, for the default line and for a format, and the ETags differ', async () => {
      const plain = await request(`${t.url}/v1/last.txt`);
      const formatted = await request(`${t.url}/v1/last.txt?format={title}`);
      expect(plain.headers.get('etag')).not.toBe(formatted.headers.get('etag'));
      expect((await request(`${t.url}/v1/last.txt`, { headers: { 'If-None-Match': plain.headers.get('etag') ?? '' } })).status).toBe(304);
      expect((await request(`${t.url}/index.txt`, { headers: { 'If-None-Match': plain.headers.get('etag') ?? '' } })).status).toBe(304);
      const again = await request(`${t.url}/v1/last.txt?format={title}`, { headers: { 'If-None-Match': formatted.headers.get('etag') ?? '' } });
      expect(again.status).toBe(304);
    });

    test('then the fast path (no query) and the Koa route (a query) answer the same headers', async () => {
      const fast = await request(`${t.url}/v1/last.txt`);
      const koa = await request(`${t.url}/v1/last.txt?`);
      const names = (headers: Headers) => [...headers.keys()].filter((name) => !['date', 'x-request-id'].includes(name)).sort();
      expect(names(fast.headers)).toEqual(names(koa.headers));
      expect(fast.headers.get('etag')).toBe(koa.headers.get('etag'));
    });

    test.each(['{artist', 'x}', '{}'])('then ?format=%s is a 400 naming the problem', async (format) => {
      const res = await request(`${t.url}/v1/last.txt?format=${encodeURIComponent(format)}`);
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error: expect.stringMatching(/^Invalid 'format': unmatched or empty/) as unknown });
    });

    test('then /cover.png is the cover and /artistthumb.png the thumbnail, with their ETags, and the missing kinds are transparent', async () => {
      const coverRes = await bytesOf(`${t.url}/cover.png`);
      expect(coverRes.body.equals(firstCover)).toBe(true);
      expect(coverRes.headers.get('content-type')).toBe('image/png');
      expect(coverRes.headers.get('cache-control')).toBe('no-cache');
      expect((await bytesOf(`${t.url}/cover.png`, { 'If-None-Match': coverRes.headers.get('etag') ?? '' })).status).toBe(304);
      expect((await bytesOf(`${t.url}/artistthumb.png`)).body.equals(thumb)).toBe(true);
      expect((await bytesOf(`${t.url}/artistlogo.png`)).body.equals(TRANSPARENT)).toBe(true);
    });

    test('then a new track with another cover is served by /cover.png right after its submission, with its real type', async () => {
      const before = await bytesOf(`${t.url}/cover.png`);
      const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Air', title: 'La Femme d’Argent', coverurl: `${host.url}/second.jpg` });
      expect(res.status).toBe(200);
      const after = await bytesOf(`${t.url}/cover.png`, { 'If-None-Match': before.headers.get('etag') ?? '' });
      expect(after.status).toBe(200);
      expect(after.headers.get('content-type')).toBe('image/jpeg');
      expect(after.body.equals(jpegCover)).toBe(true);
      expect((await request(`${t.url}/index.txt`)).text).toBe('Air - La Femme d’Argent');
    });
  });
});

describe('pages.idleText', () => {
  test('When it is set and nothing is playing, then the text forms say it', async () => {
    const t = await startTestServer({ config: { pages: { idleText: 'Off air' } } });
    try {
      expect((await request(`${t.url}/v1/last.txt`)).text).toBe('Off air');
      expect((await request(`${t.url}/index.txt?format={artist}`)).text).toBe('Off air');
    } finally {
      await t.close();
    }
  });
});

// docs/chat-bots-and-obs.md "Plain text": a bot prints an empty answer as an error, so a track
// whose line renders empty answers the default line, then pages.idleText; never 200 and nothing.
describe('a known field missing from the track', () => {
  test('When ?format={{title}} meets a track without a title, then the answer is the default Artist - Title line', async () => {
    const t = await startTestServer({ config: { pages: { idleText: 'Off air' } } });
    try {
      await postJson(`${t.url}/v1/remoteinput`, { artist: 'Four Tet' });
      for (const path of ['/v1/last.txt?format={{title}}', '/index.txt?format=%7Btitle%7D', '/v1/last.txt']) {
        const res = await request(`${t.url}${path}`);
        expect([res.status, res.text]).toEqual([200, 'Four Tet']);
      }
    } finally {
      await t.close();
    }
  });

  test('When the track has neither artist nor title, then the answer is pages.idleText, not an empty body', async () => {
    const t = await startTestServer({ config: { pages: { idleText: 'Something unnamed is playing' } } });
    try {
      await postJson(`${t.url}/v1/remoteinput`, { isrc: 'GBDUW0000053' });
      for (const path of ['/v1/last.txt', '/v1/last.txt?format={{title}}']) {
        const res = await request(`${t.url}${path}`);
        expect([res.status, res.text]).toEqual([200, 'Something unnamed is playing']);
      }
    } finally {
      await t.close();
    }
  });
});
