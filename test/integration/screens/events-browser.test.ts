import { artifactPath, describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { postJson } from '../../helpers/http';
import { serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// A web widget on another origin that follows the current track with the browser's own
// EventSource (no library), as docs/chat-bots-and-obs.md shows it, in real Chromium.

function widgetPage(svcUrl: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>widget</title></head>
<body><div id="now"></div><div id="state"></div>
<script>
  const events = new EventSource('${svcUrl}/v1/events');
  events.onopen = () => { document.getElementById('state').textContent = 'open'; };
  events.addEventListener('track', (event) => {
    const track = JSON.parse(event.data);
    document.getElementById('now').textContent = track.artist + ' - ' + track.title + ' #' + event.lastEventId;
  });
</script></body></html>`;
}

interface InPage {
  document: { getElementById(id: string): { textContent: string | null } | null };
}

describeWithChromium('EventSource on /v1/events from another origin, in headless Chromium', () => {
  jest.setTimeout(60_000);
  let host: ImageHost;
  let t: TestServer;
  let browser: Browser | undefined;

  beforeAll(async () => {
    host = await startImageHost();
    t = await startTestServer();
    host.route('/widget.html', serveBytes(Buffer.from(widgetPage(t.url)), 'text/html; charset=utf-8'));
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
    await host.close();
  });

  it('When a track is submitted, then the widget shows it live, with its dbid as the event id', async () => {
    browser = await launchBrowser({ width: 600, height: 200 });
    const page = await browser.context.newPage();
    await page.goto(`${host.url}/widget.html`);
    const textOf = (id: string) => page.evaluate((name) => (globalThis as unknown as InPage).document.getElementById(name)?.textContent ?? '', id);
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.getElementById('state')?.textContent === 'open');
    expect(await textOf('now')).toBe('');

    const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Caribou', title: 'Sun' });
    expect(res.status).toBe(200);
    const expected = `Caribou - Sun #${String((res.json as { dbid: number }).dbid)}`;
    await page.waitForFunction((text) => (globalThis as unknown as InPage).document.getElementById('now')?.textContent === text, expected);
    await page.screenshot({ path: artifactPath('events-widget.png') });
  });
});
