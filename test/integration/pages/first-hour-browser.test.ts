import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/first-hour.md, in headless Chromium with nothing playing: the slideshow is transparent
// (with and without OBS's default custom CSS), the overlay stays transparent inside OBS and
// says what it is in an ordinary browser, and /history/ opens the working page.

interface InPage {
  document: {
    documentElement: object & { dataset: Record<string, string | undefined> };
    body: object & { dataset?: Record<string, string | undefined> };
    head: { appendChild(node: object): void };
    createElement(tag: string): { textContent: string | null };
    getElementById(id: string): { hidden: boolean; textContent: string | null } | null;
  };
  getComputedStyle(element: object): { backgroundColor: string };
  obsstudio?: object;
}

// OBS Browser Source's default "Custom CSS" (obsproject/obs-browser obs-browser-source.cpp,
// the "css" default), appended as a <style> element after load.
const OBS_DEFAULT_CSS = 'body { background-color: rgba(0, 0, 0, 0); margin: 0px auto; overflow: hidden; }';

describeWithChromium('first-hour pages in headless Chromium, nothing playing', () => {
  jest.setTimeout(60_000);
  let t: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());
  afterEach(() => browser.close());

  const open = async (path: string, options: { inObs?: boolean; width?: number; height?: number } = {}): Promise<Page> => {
    browser = await launchBrowser({ width: options.width ?? 800, height: options.height ?? 200 });
    const page = await browser.context.newPage();
    // OBS's browser source defines window.obsstudio before the page's scripts run.
    if (options.inObs) await page.addInitScript(() => ((globalThis as unknown as InPage).obsstudio = { pluginVersion: '2.21.0' }));
    await page.goto(`${t.url}${path}`);
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.documentElement.dataset.stream === 'open');
    return page;
  };

  const backgrounds = (page: Page) =>
    page.evaluate(() => {
      const win = globalThis as unknown as InPage;
      return [win.getComputedStyle(win.document.documentElement).backgroundColor, win.getComputedStyle(win.document.body).backgroundColor];
    });

  it('When the slideshow shows nothing, then html and body are transparent, with OBS default CSS too', async () => {
    const page = await open('/slideshow', { inObs: true, width: 1920, height: 1080 });
    expect(await backgrounds(page)).toEqual(['rgba(0, 0, 0, 0)', 'rgba(0, 0, 0, 0)']);
    await page.evaluate((css) => {
      const win = globalThis as unknown as InPage;
      const style = win.document.createElement('style');
      style.textContent = css;
      win.document.head.appendChild(style);
    }, OBS_DEFAULT_CSS);
    expect(await backgrounds(page)).toEqual(['rgba(0, 0, 0, 0)', 'rgba(0, 0, 0, 0)']);
  });

  it('When the overlay is opened in an ordinary browser, then a hint names the page and links the others', async () => {
    const page = await open('/');
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.getElementById('hint')?.hidden === false);
    const hint = await page.evaluate(() => (globalThis as unknown as InPage).document.getElementById('hint')?.textContent ?? '');
    expect(hint).toMatch(/now-playing overlay/);
    expect(await page.getAttribute('#hint a[href="slideshow"]', 'href')).toBe('slideshow');
    expect(await page.getAttribute('#hint a[href="history"]', 'href')).toBe('history');
  });

  it('When the overlay is opened in OBS, then it stays transparent and shows no hint', async () => {
    const page = await open('/', { inObs: true });
    // The hint would appear 0.8 s after load; wait past that on the page's own clock.
    await page.waitForTimeout(1500);
    expect(await page.evaluate(() => (globalThis as unknown as InPage).document.getElementById('hint')?.hidden)).toBe(true);
    expect(await backgrounds(page)).toEqual(['rgba(0, 0, 0, 0)', 'rgba(0, 0, 0, 0)']);
  });

  it('When /history/ is opened, then the browser lands on the working history page', async () => {
    const page = await open('/history/');
    expect(new URL(page.url()).pathname).toBe('/history');
  });
});

describeWithChromium('the history page: safe downloads and dates across days, in headless Chromium', () => {
  jest.setTimeout(60_000);
  let t: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestServer();
    const { tracks } = t.server;
    const insert = async (receivedAt: string, metadata: Record<string, string>) =>
      tracks.insert({ receivedSeq: await tracks.nextReceivedSeq(), receivedAt, metadata });
    await insert('2026-11-21T23:50:00.000Z', { artist: '=HYPERLINK("http://evil.example","click")', title: 'One' });
    await insert('2026-11-22T00:10:00.000Z', { artist: '@SUM(1+1)', title: 'Two\nforged 00:00  Fake - Line' });
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
  });

  it('When the list spans days, then rows show dates, the CSV neutralises formulas and the text keeps one line per track', async () => {
    browser = await launchBrowser({ width: 1000, height: 700 }, { timezoneId: 'UTC' });
    const page = await browser.context.newPage();
    await page.goto(`${t.url}/history`);
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.body.dataset?.count === '2');
    // Downloaded as a person would: a click on the link, the file read from disk.
    const download = async (id: string) => {
      const [file] = await Promise.all([page.waitForEvent('download'), page.click(`#${id}`)]);
      return fs.readFileSync(await file.path(), 'utf8');
    };
    const csv = await download('download-csv');
    expect(csv.split('\r\n')).toEqual([
      'received_at,artist,title,album,label,date,isrc,duration,started_at,ended_at,end_reason,kind,usage,channel,dj,show,atp,listener_seconds,peak',
      `2026-11-21T23:50:00.000Z,"'=HYPERLINK(""http://evil.example"",""click"")",One,,,,,,2026-11-21T23:50:00.000Z,2026-11-22T00:10:00.000Z,next,music,feature,main,,,,,`,
      `2026-11-22T00:10:00.000Z,'@SUM(1+1),"Two\nforged 00:00  Fake - Line",,,,,,2026-11-22T00:10:00.000Z,,,music,feature,main,,,,,`,
      '',
    ]);
    const text = await download('download-text');
    expect(text).toBe('2026-11-21 23:50  =HYPERLINK("http://evil.example","click") - One\n2026-11-22 00:10  @SUM(1+1) - Two forged 00:00  Fake - Line\n');
    const times = await page.locator('time.time').allTextContents();
    expect(times).toEqual(['2026-11-22 00:10', '2026-11-21 23:50']);
    // The date and time stay on one line: the element is no taller than one line of its text.
    const heights = await page.locator('time.time').evaluateAll((elements) =>
      elements.map((element) => {
        const style = (globalThis as unknown as { getComputedStyle(e: unknown): { lineHeight: string; fontSize: string } }).getComputedStyle(element);
        const line = Number.parseFloat(style.lineHeight) || Number.parseFloat(style.fontSize) * 1.3;
        return (element as unknown as { getBoundingClientRect(): { height: number } }).getBoundingClientRect().height / line;
      }),
    );
    for (const lines of heights) expect(lines).toBeLessThan(1.5);
  });

  it('When the window is as narrow as a phone, then the date still stays on one line', async () => {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 360, height: 640 });
    await page.goto(`${t.url}/history`);
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.body.dataset?.count === '2');
    const boxes = await page
      .locator('time.time')
      .evaluateAll((elements) =>
        elements.map((element) => (element as unknown as { getBoundingClientRect(): { height: number } }).getBoundingClientRect().height),
      );
    const fontSize = await page
      .locator('time.time')
      .first()
      .evaluate((element) =>
        Number.parseFloat((globalThis as unknown as { getComputedStyle(e: unknown): { fontSize: string } }).getComputedStyle(element).fontSize),
      );
    for (const height of boxes) expect(height).toBeLessThan(fontSize * 2);
  });
});
