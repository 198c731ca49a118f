import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { storedCount } from '../../helpers/stored-count';

// docs/decisions.md "Hostile clients and browsers", in a real browser: a page from another local
// origin (http://127.0.0.2:<port>) tries every way a page can write to svc without CORS' say:
// a no-cors fetch POST with text/plain, an auto-submitted form POST, an <img> GET and a
// no-cors fetch GET. Chromium sends Origin and Sec-Fetch-Site itself; svc must store nothing.

function attackPage(svcUrl: string): string {
  const submit = `${svcUrl}/v1/remoteinput`;
  return `<!doctype html><meta charset="utf-8"><title>evil</title>
<iframe name="sink" id="sink"></iframe>
<form id="form" method="POST" action="${submit}" target="sink" enctype="application/x-www-form-urlencoded">
  <input name="artist" value="Form"><input name="title" value="Post">
</form>
<script>
  const attempts = [];
  attempts.push(fetch(${JSON.stringify(submit)}, { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify({ artist: 'Fetch', title: 'Post' }) }).catch(() => undefined));
  attempts.push(fetch(${JSON.stringify(`${submit}?artist=Fetch&title=Get`)}, { mode: 'no-cors' }).catch(() => undefined));
  attempts.push(new Promise((done) => { const img = new Image(); img.onload = img.onerror = done; img.src = ${JSON.stringify(`${submit}?artist=Img&title=Get`)}; }));
  attempts.push(new Promise((done) => { document.getElementById('sink').addEventListener('load', done, { once: true }); document.getElementById('form').submit(); }));
  Promise.all(attempts).then(() => { document.title = 'done'; });
</script>`;
}

describeWithChromium('a page on another local origin, in headless Chromium', () => {
  jest.setTimeout(60_000);
  let t: TestServer;
  let browser: Browser;
  let evil: http.Server;
  let evilUrl: string;

  beforeAll(async () => {
    t = await startTestServer();
    evil = http.createServer((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      response.end(attackPage(t.url));
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.2', resolve));
    evilUrl = `http://127.0.0.2:${(evil.address() as AddressInfo).port}/`;
    browser = await launchBrowser({ width: 800, height: 600 });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => evil.close(resolve));
    await t.close();
  });

  it('When the page submits by fetch, form and <img>, then every write reaches svc, is refused with 403, and nothing is stored', async () => {
    const page = await browser.context.newPage();
    await page.goto(evilUrl);
    await page.waitForFunction(() => (globalThis as unknown as { document: { title: string } }).document.title === 'done');
    // The access log: one line per request that reached svc, with its method and status.
    const writes = t.logs.flatMap((line) => /info (\w+) \/v1\/remoteinput\S* (\d{3}) /.exec(line)?.slice(1, 3).join(' ') ?? []);
    expect(writes.sort()).toEqual(['GET 403', 'GET 403', 'POST 403', 'POST 403']);
    expect(await storedCount(t.server.tracks)).toBe(0);
    await page.close();
  });
});
