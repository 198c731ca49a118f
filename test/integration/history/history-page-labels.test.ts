import type { Page } from 'playwright-core';
import { describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { postJson } from '../../helpers/http';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/pages.md (the /history page): the page says which time zone its times are in (the browser's;
// reports use reports.timeZone), and one listener is "1 listener". The listeners line is fed a
// /v1/history answer carrying listeners (a play counted by Icecast, docs/play-log.md), the rest
// is the real page against a real server.

interface InPage {
  document: { querySelector(selector: string): { textContent: string | null } | null; body: { dataset: Record<string, string | undefined> } };
}

describeWithChromium('the /history page labels', () => {
  jest.setTimeout(60_000);
  let t: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestServer();
    browser = await launchBrowser({ width: 900, height: 500 }, { timezoneId: 'America/New_York' });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const textOf = (page: Page, selector: string) =>
    page.evaluate((css) => (globalThis as unknown as InPage).document.querySelector(css)?.textContent ?? '', selector);

  it('When the page opens, then the header names the browser time zone the times are in', async () => {
    expect((await postJson(`${t.url}/v1/remoteinput`, { artist: 'Four Tet', title: 'Baby' })).status).toBe(200);
    const page = await browser.context.newPage();
    await page.goto(`${t.url}/history`);
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.body.dataset.count === '1');
    expect(await textOf(page, '#range')).toBe('newest first · times in America/New_York (this browser)');
    await page.close();
  });

  it.each([
    [1, 1, '1 listener (peak 1)'],
    [2, 3, '2 listeners (peak 3)'],
    [0, 0, '0 listeners (peak 0)'],
  ])('When a play had %d listeners on average (peak %d), then the line says "%s"', async (atp, peak, expected) => {
    const page = await browser.context.newPage();
    const play = {
      dbid: 7,
      artist: 'Four Tet',
      title: 'Baby',
      received_at: '2026-11-23T21:00:00.000Z',
      started_at: '2026-11-23T21:00:00.000Z',
      ended_at: '2026-11-23T21:04:00.000Z',
      listeners: { atp, peak },
    };
    await page.route(/\/v1\/history/, (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ tracks: [play] }) }));
    await page.goto(`${t.url}/history`);
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.body.dataset.count === '1');
    expect(await textOf(page, '.track .play')).toMatch(new RegExp(`· ${expected.replace(/[()]/g, '\\$&')}$`));
    await page.close();
  });
});
