import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { request } from '../../helpers/http';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/first-hour.md "Styling the pages in OBS": the pages' CSP lets custom CSS load web fonts
// and pictures over https:, `staticDir` is served at /static/ and /httpstatic/ without listings
// or escapes, and the page paths work with a trailing slash.

/** GET with the path sent byte for byte: fetch and URL would resolve `..` and `%2e%2e` first. */
function getRawPath(base: string, rawPath: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path: rawPath, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject).end();
  });
}

describe('pages: CSP, staticDir and trailing slashes', () => {
  const temp = makeTempDir('svc-static-');
  const staticDir = path.join(temp.dir, 'mine');
  const outside = path.join(temp.dir, 'outside');
  let t: TestServer;

  beforeAll(async () => {
    fs.mkdirSync(path.join(staticDir, 'fonts'), { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(staticDir, 'overlay.css'), 'body { font-family: Mine; }');
    fs.writeFileSync(path.join(staticDir, 'fonts', 'mine.woff2'), Buffer.from([0x77, 0x4f, 0x46, 0x32]));
    fs.writeFileSync(path.join(staticDir, 'page.html'), '<p>mine</p>');
    fs.writeFileSync(path.join(staticDir, '.env'), 'SECRET=1');
    fs.writeFileSync(path.join(outside, 'private.txt'), 'not yours');
    fs.symlinkSync(path.join(outside, 'private.txt'), path.join(staticDir, 'link-out.txt'));
    fs.symlinkSync(outside, path.join(staticDir, 'folder-out'));
    t = await startTestServer({ config: { staticDir } });
  });
  afterAll(async () => {
    await t.close();
    temp.cleanup();
  });

  it('When a page is fetched, then its CSP allows https: styles, fonts and images, and scripts only from svc', async () => {
    const csp = (await request(`${t.url}/`)).headers.get('content-security-policy') ?? '';
    const directive = (name: string) =>
      csp
        .split(';')
        .map((part) => part.trim())
        .find((part) => part.startsWith(`${name} `)) ?? '';
    expect(directive('style-src').split(' ')).toEqual(expect.arrayContaining(["'self'", "'unsafe-inline'", 'https:']));
    expect(directive('font-src').split(' ')).toEqual(expect.arrayContaining(["'self'", 'https:']));
    expect(directive('img-src').split(' ')).toEqual(expect.arrayContaining(["'self'", 'https:']));
    expect(directive('script-src')).toBe("script-src 'self'");
    expect(directive('default-src')).toBe("default-src 'none'");
  });

  it.each(['/static/', '/httpstatic/'])('When a file under staticDir is fetched at %s, then it comes with its type', async (prefix) => {
    const css = await request(`${t.url}${prefix}overlay.css`);
    expect([css.status, css.headers.get('content-type'), css.text]).toEqual([200, 'text/css; charset=utf-8', 'body { font-family: Mine; }']);
    const font = await request(`${t.url}${prefix}fonts/mine.woff2`);
    expect([font.status, font.headers.get('content-type'), font.headers.get('x-content-type-options')]).toEqual([200, 'font/woff2', 'nosniff']);
    const page = await request(`${t.url}${prefix}page.html`);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
  });

  it.each([
    '/static/../outside/private.txt',
    '/static/%2e%2e/outside/private.txt',
    '/static/%2E%2E%2Foutside%2Fprivate.txt',
    '/static/fonts/..%2f..%2foutside/private.txt',
    '/httpstatic/..\\outside\\private.txt',
    '/static/link-out.txt',
    '/static/folder-out/private.txt',
    '/static/.env',
    '/static/',
    '/static/fonts',
    '/static/fonts/',
    '/static/%00overlay.css',
    '/static/%E0%A4%A',
  ])('When %s is asked for, then a JSON 404 and nothing from outside the folder', async (rawPath) => {
    const answer = await getRawPath(t.url, rawPath);
    expect(answer.status).toBe(404);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.body).not.toContain('not yours');
    expect(answer.body).not.toContain('SECRET');
  });

  it.each(['/history/', '/slideshow/'])('When %s is asked for, then it redirects to the page without the slash, query kept', async (route) => {
    const answer = await getRawPath(t.url, `${route}?interval=5`);
    expect(answer.status).toBe(308);
    const target = new URL(answer.headers.location ?? '', `${t.url}${route}`);
    expect(`${target.pathname}${target.search}`).toBe(`${route.slice(0, -1)}?interval=5`);
    const page = await request(target.href);
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
  });

  it('When staticDir is not a folder, then the server does not start and says why', async () => {
    await expect(startTestServer({ config: { staticDir: path.join(temp.dir, 'missing') } })).rejects.toThrow(/staticDir .*missing/);
  });
});
