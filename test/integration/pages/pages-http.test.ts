import fs from 'node:fs';
import path from 'node:path';
import { asObject, request } from '../../helpers/http';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { PNG_SIGNATURE } from '../../helpers/images';

// GET /, /slideshow and /assets/<file>: the shipped files, with caching and a CSP that keeps
// the pages to their own origin.

describe('overlay page routes', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('When / and /slideshow are fetched, then they are the shipped HTML with a same-origin CSP', async () => {
    for (const [route, file] of [
      ['/', 'overlay.html'],
      ['/slideshow', 'slideshow.html'],
    ]) {
      const res = await request(`${t.url}${route}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.text).toBe(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'public', file), 'utf8'));
      // Relative references only: no CDN, and the pages work behind a path prefix too.
      expect(res.text).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
  });

  it('When an asset is fetched, then it has its type and revalidates by ETag', async () => {
    const res = await request(`${t.url}/assets/stream.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const etag = res.headers.get('etag') as string;
    const again = await fetch(`${t.url}/assets/stream.js`, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect((await request(`${t.url}/assets/overlay.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('When /favicon.ico is fetched, then it is the shipped icon: an ICO whose one image is a 32x32 PNG', async () => {
    const res = await fetch(`${t.url}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/x-icon');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.equals(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'public', 'favicon.ico')))).toBe(true);
    // ICONDIR: reserved 0, type 1 (icon), one entry; the entry's image is a PNG at its offset.
    expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2), bytes.readUInt16LE(4)]).toEqual([0, 1, 1]);
    expect([bytes[6], bytes[7]]).toEqual([32, 32]);
    const offset = bytes.readUInt32LE(18);
    expect(bytes.readUInt32LE(14)).toBe(bytes.length - offset);
    expect(bytes.subarray(offset, offset + 8).equals(PNG_SIGNATURE)).toBe(true);
  });

  it('When an asset is unknown, then the answer is a JSON 404 and nothing outside public/ is reachable', async () => {
    for (const route of ['/assets/nope.js', '/assets/overlay.html', '/assets/..%2Fpackage.json', '/assets/%2E%2E/src/server/start.ts', '/public/overlay.js']) {
      const res = await request(`${t.url}${route}`);
      expect([route, res.status]).toEqual([route, 404]);
      expect(typeof asObject(res.json).error).toBe('string');
    }
  });

  it('When / is posted to, then it is a JSON 405', async () => {
    const res = await request(`${t.url}/`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('GET');
  });
});
