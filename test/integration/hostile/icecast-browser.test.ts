import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { startIcecastTestServer, type IcecastTestServer } from '../../helpers/icecast-source';
import { storedCount } from '../../helpers/stored-count';

// Round three, N2 and N3 in a real browser (docs/security.md "Icecast sources"): a page on
// another origin (http://127.0.0.2:<port>) guesses the password through `admin.cgi?pass=` with
// <img> tags (a dictionary that holds the right one), writes through the Icecast port by no-cors
// fetch, form, iframe and a redirect, and reads /v1/last to learn whether a guess worked.
// Before: the secret was learned in 7.6 s and 21 of 21 writes were stored. Now Chromium's own
// Origin / Sec-Fetch-* / Referer headers get every request refused.

const PASSWORD = 'dj-secret-3';

function attackPage(icecastUrl: string, svcUrl: string): string {
  const dictionary = ['123456', 'hackme', 'password', PASSWORD, 'letmein'];
  const cgi = (pass: string, song: string) => `${icecastUrl}/admin.cgi?mode=updinfo&pass=${encodeURIComponent(pass)}&song=${encodeURIComponent(song)}`;
  const images = dictionary.map((word) => JSON.stringify(cgi(word, `Evil - ${word}`)));
  return `<!doctype html><meta charset="utf-8"><title>evil</title>
<iframe name="sink" id="sink"></iframe>
<iframe id="frame" src=${JSON.stringify(cgi(PASSWORD, 'Evil - Iframe'))}></iframe>
<form id="form" method="POST" action=${JSON.stringify(`${icecastUrl}/admin.cgi?mode=updinfo&pass=${PASSWORD}&song=Evil%20-%20Form`)} target="sink">
  <input name="x" value="y">
</form>
<script>
  const load = (src) => new Promise((done) => { const img = new Image(); img.onload = img.onerror = done; img.src = src; });
  const attempts = [${images.map((src) => `load(${src})`).join(', ')}];
  attempts.push(fetch(${JSON.stringify(cgi(PASSWORD, 'Evil - Fetch'))}, { mode: 'no-cors' }).catch(() => undefined));
  attempts.push(fetch(${JSON.stringify(`${icecastUrl}/live.ogg`)}, { method: 'POST', mode: 'no-cors', body: 'OggS' }).catch(() => undefined));
  attempts.push(fetch(${JSON.stringify(`${svcUrl}/v1/remoteinput?secret=${PASSWORD}&artist=Evil&title=Api`)}, { mode: 'no-cors' }).catch(() => undefined));
  attempts.push(new Promise((done) => { document.getElementById('sink').addEventListener('load', done, { once: true }); document.getElementById('form').submit(); }));
  Promise.all(attempts)
    .then(() => fetch(${JSON.stringify(`${svcUrl}/v1/last`)}).then((answer) => answer.json()))
    .then((last) => { document.title = 'done:' + JSON.stringify(last); }, (error) => { document.title = 'done:error ' + error; });
</script>`;
}

describeWithChromium('a page on another origin against the Icecast port, in headless Chromium', () => {
  jest.setTimeout(60_000);
  let svc: IcecastTestServer;
  let browser: Browser;
  let evil: http.Server;
  let evilUrl: string;

  beforeAll(async () => {
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } });
    evil = http.createServer((request, response) => {
      // A redirect from the evil page to the Icecast port: a navigation, refused too.
      if (request.url === '/go') {
        response.writeHead(302, { Location: `${svc.listener.url}/admin.cgi?mode=updinfo&pass=${PASSWORD}&song=Evil%20-%20Redirect` });
        response.end();
        return;
      }
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      response.end(attackPage(svc.listener.url, svc.ts.url));
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.2', resolve));
    evilUrl = `http://127.0.0.2:${(evil.address() as AddressInfo).port}`;
    browser = await launchBrowser({ width: 800, height: 600 });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => evil.close(resolve));
    await svc.close();
  });

  it('When the page guesses the password and writes every way it can, then nothing is stored and /v1/last tells it nothing', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${evilUrl}/`);
    await page.waitForFunction(() => (globalThis as unknown as { document: { title: string } }).document.title.startsWith('done:'));
    const title = await page.title();
    expect(title).toBe('done:{}');
    // The redirect, as a top-level navigation.
    await page.goto(`${evilUrl}/go`).catch(() => undefined);
    expect(await storedCount(svc.ts.server.tracks)).toBe(0);
    expect(svc.ts.logs.some((line) => line.includes('a request from a browser (127.0.0.1) refused'))).toBe(true);
    // Not one guess was even checked: the throttle never saw a failure from the browser.
    expect(svc.ts.logs.some((line) => line.includes('failed authentication'))).toBe(false);
    expect(svc.ts.logs.join('\n')).not.toContain(PASSWORD);
    await page.close();
  });
});
