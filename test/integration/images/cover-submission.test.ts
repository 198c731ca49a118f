import { createHash } from 'node:crypto';
import { asObject, getWithQuery, postJson, request } from '../../helpers/http';
import { makePng } from '../../helpers/images';
import { afterDelay, redirectTo, serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// POST /v1/remoteinput with a `coverurl`, then GET /cover/<key>: the server fetches the cover
// itself (never echoing the URL) and serves the stored bytes. All hosts are on loopback.

const png = makePng(16, 16, [250, 120, 0], [30, 0, 120]);
const pngKey = createHash('sha256').update(png).digest('hex');

describe('submitted cover URLs', () => {
  let host: ImageHost;
  beforeAll(async () => {
    host = await startImageHost('127.0.0.1');
    host.route('/cover.png?token=s3cr3t', serveBytes(png, 'image/png'));
    host.route('/page.html', serveBytes(Buffer.from('<html><body>not an image</body></html>'), 'image/jpeg'));
  });
  afterAll(() => host.close());
  beforeEach(() => {
    host.requests.length = 0;
  });

  describe('When LAN hosts are allowed (coverFetch.allowPrivateAddresses)', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer({ config: { coverFetch: { allowPrivateAddresses: true } } });
    });
    afterAll(() => t.close());

    it('then the 200 already carries coverurl cover/<sha256> and never the submitted URL', async () => {
      const submitted = `${host.url}/cover.png?token=s3cr3t`;
      const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Boards of Canada', title: 'Roygbiv', coverurl: submitted });
      expect(res.status).toBe(200);
      expect(asObject(asObject(res.json).processed_metadata).coverurl).toBe(`cover/${pngKey}`);
      expect(asObject(res.json).warnings).toBeUndefined();
      expect(res.text).not.toContain('s3cr3t');
      const last = await request(`${t.url}/v1/last`);
      expect(asObject(last.json).coverurl).toBe(`cover/${pngKey}`);
      expect(last.text).not.toContain(host.url);
      expect(t.logs.join('\n')).not.toContain('s3cr3t');
    });

    it('then GET /cover/<key> serves the bytes with the real type, a strong ETag and immutable caching', async () => {
      const res = await fetch(`${t.url}/cover/${pngKey}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(res.headers.get('etag')).toBe(`"${pngKey}"`);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);

      const cached = await fetch(`${t.url}/cover/${pngKey}`, { headers: { 'If-None-Match': `"${pngKey}"` } });
      expect(cached.status).toBe(304);
      const head = await fetch(`${t.url}/cover/${pngKey}`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String(png.length));
    });

    it('then an unknown or malformed key is a JSON 404', async () => {
      for (const path of [`/cover/${'0'.repeat(64)}`, '/cover/abc', `/cover/${pngKey.toUpperCase()}`, '/cover/..%2F..%2Fetc%2Fpasswd']) {
        const res = await request(`${t.url}${path}`);
        expect([path, res.status]).toEqual([path, 404]);
        expect(typeof asObject(res.json).error).toBe('string');
      }
    });

    it('then a coverurl that is not http(s) is dropped with a warning, and nothing else changes', async () => {
      for (const coverurl of ['ftp://127.0.0.1/c.jpg', '/home/dj/cover.jpg', 'file:///etc/passwd', 'C:\\covers\\a.jpg']) {
        const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'B', coverurl });
        expect(res.status).toBe(200);
        const body = asObject(res.json);
        expect(asObject(body.processed_metadata).coverurl).toBeUndefined();
        expect(body.warnings).toEqual(["Field 'coverurl' dropped: not an http(s) URL"]);
        expect(res.text).not.toContain(coverurl.replaceAll('\\', '\\\\'));
      }
    });

    it('then a coverurl that is not an image is dropped with a warning', async () => {
      const res = await getWithQuery(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Not a cover', coverurl: `${host.url}/page.html` });
      expect(res.status).toBe(200);
      expect(asObject(asObject(res.json).processed_metadata).coverurl).toBeUndefined();
      expect(asObject(res.json).warnings).toEqual(["Field 'coverurl' dropped: not a JPEG, PNG, WebP or GIF image"]);
    });

    it('then our own cover/<key> (as `svc last` prints it) is kept when the image is stored here', async () => {
      const kept = await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Again', coverurl: `cover/${pngKey}` });
      expect(asObject(asObject(kept.json).processed_metadata).coverurl).toBe(`cover/${pngKey}`);
      // Another title: the same one again would be the same play, which keeps the cover it has (docs/title-first.md).
      const unknown = await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Unknown key', coverurl: `cover/${'1'.repeat(64)}` });
      expect(asObject(asObject(unknown.json).processed_metadata).coverurl).toBeUndefined();
      expect(host.requests).toEqual([]);
    });
  });

  describe('When LAN hosts are not allowed (the default)', () => {
    let t: TestServer;
    let standIn: ImageHost;
    beforeAll(async () => {
      standIn = await startImageHost('127.0.0.2');
      standIn.route('/redirect.png', redirectTo(`${host.url}/cover.png?token=s3cr3t`));
      // 127.0.0.2 stands in for a public host; every other address gets the real guard.
      t = await startTestServer({ imageFetch: { allowAddress: (address) => address === '127.0.0.2' } });
    });
    afterAll(async () => {
      await t.close();
      await standIn.close();
    });

    const refusedWarning = "Field 'coverurl' dropped: its host is a local or reserved address";

    it('then a loopback URL is refused without the target seeing a request, and the track is still stored', async () => {
      for (const coverurl of [`${host.url}/cover.png?token=s3cr3t`, `http://[::ffff:127.0.0.1]:${host.port}/cover.png?token=s3cr3t`]) {
        const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Refused', coverurl });
        expect(res.status).toBe(200);
        expect(asObject(asObject(res.json).processed_metadata).coverurl).toBeUndefined();
        expect(asObject(res.json).warnings).toEqual([refusedWarning]);
      }
      expect(host.requests).toEqual([]);
    });

    it('then a name that resolves to loopback is refused without the target seeing a request', async () => {
      const res = await postJson(`${t.url}/v1/remoteinput`, {
        artist: 'A',
        title: 'Refused',
        coverurl: `http://localhost:${host.port}/cover.png?token=s3cr3t`,
      });
      expect(asObject(res.json).warnings).toEqual([refusedWarning]);
      expect(host.requests).toEqual([]);
    });

    it('then a redirect to loopback is refused without the target seeing a request', async () => {
      const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Redirected', coverurl: `${standIn.url}/redirect.png` });
      expect(res.status).toBe(200);
      expect(asObject(res.json).warnings).toEqual([refusedWarning]);
      expect(standIn.requests).toEqual(['/redirect.png']);
      expect(host.requests).toEqual([]);
      expect(t.logs.join('\n')).not.toContain('s3cr3t');
    });
  });

  describe('When the cover is slower than the processing budget allows', () => {
    it('then the track is stored without it, with a warning, instead of a 408', async () => {
      host.route('/slow.png', afterDelay(3000, serveBytes(png, 'image/png')));
      const t = await startTestServer({ config: { processingTimeoutSeconds: 1, coverFetch: { allowPrivateAddresses: true } } });
      try {
        // A 200 with the warning, not the 408 of a spent budget: the outcome shows the cover was given up in time.
        const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Slow cover', coverurl: `${host.url}/slow.png` });
        expect(res.status).toBe(200);
        expect(asObject(res.json).warnings).toEqual(["Field 'coverurl' dropped: the download took too long"]);
        expect(asObject((await request(`${t.url}/v1/last`)).json).title).toBe('Slow cover');
      } finally {
        await t.close();
      }
    });
  });
});
