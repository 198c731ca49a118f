import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { artifactPath, describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { postJson } from '../../helpers/http';
import { makePng } from '../../helpers/images';
import { serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// GET /history, the setlist page, in headless Chromium: it lists the stored tracks newest first
// with their covers, adds a new one live from /v1/images/ws, and offers CSV and text downloads.
// The screenshot goes to test/artifacts/history.png to be looked at. In-page code is passed as
// functions (the page's CSP forbids string evaluation); the few DOM globals are typed here.

interface InPage {
  document: {
    body: { dataset: Record<string, string | undefined> };
    documentElement: { dataset: Record<string, string | undefined> };
    querySelectorAll(selector: string): ArrayLike<{ textContent: string | null; complete?: boolean; naturalWidth?: number }>;
  };
}

describeWithChromium('the /history page in headless Chromium', () => {
  jest.setTimeout(60_000);
  let host: ImageHost;
  let t: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    host = await startImageHost();
    host.route('/a.png', serveBytes(makePng(300, 300, [255, 94, 58], [120, 20, 140]), 'image/png'));
    host.route('/b.png', serveBytes(makePng(300, 300, [20, 160, 220], [10, 30, 90]), 'image/png'));
    host.route('/c.png', serveBytes(makePng(300, 300, [250, 210, 40], [200, 60, 20]), 'image/png'));
    t = await startTestServer({ config: { coverFetch: { allowPrivateAddresses: true } } });
    const set = [
      { artist: 'Massive Attack', title: 'Teardrop', album: 'Mezzanine', date: '1998', coverurl: `${host.url}/a.png` },
      { artist: 'Daft Punk', title: 'One More Time', album: 'Discovery', date: '2001', coverurl: `${host.url}/b.png` },
      { artist: 'Röyksopp', title: 'Eple', album: 'Melody A.M.', date: '2001' },
    ];
    for (const track of set) expect((await postJson(`${t.url}/v1/remoteinput`, track)).status).toBe(200);
    browser = await launchBrowser({ width: 1000, height: 560 });
  });
  afterAll(async () => {
    await browser.close();
    await t.close();
    await host.close();
  });

  const titles = (page: Page) =>
    page.evaluate(() => Array.from((globalThis as unknown as InPage).document.querySelectorAll('.track .title'), (node) => node.textContent));

  it('When opened, then it lists the tracks newest first with covers, and a new track appears live at the top', async () => {
    const page = await browser.context.newPage();
    const foreign: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(`${t.url}/`) && !req.url().startsWith(t.url.replace('http', 'ws')) && !req.url().startsWith('blob:')) foreign.push(req.url());
    });
    await page.goto(`${t.url}/history`);
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.body.dataset.count === '3');
    expect(await titles(page)).toEqual(['Eple', 'One More Time', 'Teardrop']);
    // Everything fits on one page: no "older" button.
    expect(await page.isVisible('#older')).toBe(false);
    await page.waitForFunction(() => {
      const thumbs = Array.from((globalThis as unknown as InPage).document.querySelectorAll('.track .thumb'));
      return thumbs.filter((img) => img.complete === true && (img.naturalWidth ?? 0) > 0).length === 2;
    });
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.documentElement.dataset.stream === 'open');

    expect((await postJson(`${t.url}/v1/remoteinput`, { artist: 'Justice', title: 'Genesis', album: '†', coverurl: `${host.url}/c.png` })).status).toBe(200);
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.body.dataset.count === '4');
    expect(await titles(page)).toEqual(['Genesis', 'Eple', 'One More Time', 'Teardrop']);
    await page.waitForTimeout(500); // the new row's cover is drawn
    await page.screenshot({ path: artifactPath('history.png') });

    const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#download-csv')]);
    const csvText = fs.readFileSync(await csv.path(), 'utf8');
    const csvLines = csvText.split('\r\n');
    expect(csvLines[0]).toBe(
      'received_at,artist,title,album,label,date,isrc,duration,started_at,ended_at,end_reason,kind,usage,channel,dj,show,atp,listener_seconds,peak',
    );
    expect(csvLines.slice(1, 5).map((line) => line.split(',')[2])).toEqual(['Teardrop', 'One More Time', 'Eple', 'Genesis']);
    const [text] = await Promise.all([page.waitForEvent('download'), page.click('#download-text')]);
    expect(fs.readFileSync(await text.path(), 'utf8')).toMatch(/^\d\d:\d\d {2}Massive Attack - Teardrop\n(.*\n){2}\d\d:\d\d {2}Justice - Genesis\n$/);
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('When the current track is deleted, then the page drops it', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${t.url}/history`);
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.body.dataset.count === '4');
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.documentElement.dataset.stream === 'open');
    const current = (await (await fetch(`${t.url}/v1/last`)).json()) as { dbid: number };
    expect((await fetch(`${t.url}/v1/history/${current.dbid}`, { method: 'DELETE' })).status).toBe(204);
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.body.dataset.count === '3');
    expect(await titles(page)).toEqual(['Eple', 'One More Time', 'Teardrop']);
    await page.close();
  });
});
