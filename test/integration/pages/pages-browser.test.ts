import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { Enricher } from '../../../src/enrich/enricher';
import { artifactPath, describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { asObject, postJson } from '../../helpers/http';
import { makePng } from '../../helpers/images';
import { afterDelay, serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// The overlay and the slideshow in a real browser: they follow /v1/images/ws, draw the
// stored images, and come back by themselves after a server restart. Screenshots go to
// test/artifacts/ to be looked at. Code that runs inside the page is passed as functions (the
// pages' CSP forbids string evaluation); the test program has no DOM types, so the few page
// globals those functions touch are typed here.

interface InPage {
  document: {
    documentElement: { dataset: Record<string, string | undefined>; style: { background: string; removeProperty(name: string): string } };
    body: object;
    getElementById(id: string): { textContent: string | null } | null;
    querySelector(selector: string): { src: string; complete: boolean; naturalWidth: number } | null;
    querySelectorAll(selector: string): { length: number };
  };
  getComputedStyle(element: object): { backgroundColor: string };
}

const covers = {
  first: makePng(400, 400, [255, 94, 58], [120, 20, 140]),
  second: makePng(400, 400, [20, 160, 220], [10, 30, 90]),
  third: makePng(400, 400, [250, 210, 40], [200, 60, 20]),
};
const fanart = makePng(1280, 720, [30, 90, 60], [200, 230, 160]);
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const fanartFinder = (host: ImageHost): Enricher => ({
  name: 'test-fanart',
  enrich: async (track) => (track.artist === 'Röyksopp' ? { images: [{ category: 'fanart', url: `${host.url}/fanart.png`, source: 'test-fanart' }] } : null),
});

const streamOpen = () => (globalThis as unknown as InPage).document.documentElement.dataset.stream === 'open';

describeWithChromium('overlay pages in headless Chromium', () => {
  jest.setTimeout(60_000);
  let host: ImageHost;
  let t: TestServer;
  let browser: Browser;
  let foreignRequests: string[];

  beforeAll(async () => {
    host = await startImageHost();
    host.route('/first.png', serveBytes(covers.first, 'image/png'));
    host.route('/second.png', serveBytes(covers.second, 'image/png'));
    host.route('/third.png', serveBytes(covers.third, 'image/png'));
    host.route('/fanart.png', afterDelay(300, serveBytes(fanart, 'image/png')));
    t = await startTestServer({ config: { coverFetch: { allowPrivateAddresses: true } }, plan: [[fanartFinder(host)]] });
  });
  afterAll(async () => {
    await t.close();
    await host.close();
  });
  beforeEach(() => {
    foreignRequests = [];
  });
  afterEach(async () => {
    await browser.close();
    // No CDN, nothing but the server that served the page.
    expect(foreignRequests).toEqual([]);
  });

  const open = async (path: string, viewport: { width: number; height: number }): Promise<Page> => {
    browser = await launchBrowser(viewport);
    const page = await browser.context.newPage();
    page.on('request', (req) => {
      if (!req.url().startsWith(`${t.url}/`) && !req.url().startsWith(t.url.replace('http', 'ws'))) foreignRequests.push(req.url());
    });
    await page.goto(`${t.url}${path}`);
    await page.waitForFunction(streamOpen);
    return page;
  };

  const submit = async (track: Record<string, string>) => {
    const res = await postJson(`${t.url}/v1/remoteinput`, track);
    expect(res.status).toBe(200);
    return asObject(res.json);
  };

  /** naturalWidth of the image shown in `selector`, once its src is `cover/<key>` and it is drawn. */
  const waitForImage = (page: Page, selector: string, key: string) =>
    page.waitForFunction(
      ({ selector, key }) => {
        const img = (globalThis as unknown as InPage).document.querySelector(selector);
        return img !== null && img.src.endsWith(`/cover/${key}`) && img.complete && img.naturalWidth > 0 ? img.naturalWidth : false;
      },
      { selector, key },
    );
  const waitForTitle = (page: Page, title: string) =>
    page.waitForFunction((expected) => (globalThis as unknown as InPage).document.getElementById('title')?.textContent === expected, title);

  it('When a track with a cover is submitted, then / shows its title, artist, album and the loaded cover, also after a restart', async () => {
    const page = await open('/', { width: 800, height: 200 });
    expect(
      await page.evaluate(() => {
        const win = globalThis as unknown as InPage;
        return win.getComputedStyle(win.document.body).backgroundColor;
      }),
    ).toBe('rgba(0, 0, 0, 0)');
    await submit({ artist: 'Daft Punk', title: 'Harder, Better, Faster, Stronger', album: 'Discovery', coverurl: `${host.url}/first.png` });
    await waitForTitle(page, 'Harder, Better, Faster, Stronger');
    expect(await (await waitForImage(page, '#cover', sha(covers.first))).jsonValue()).toBe(400);
    expect(await page.textContent('#artist')).toBe('Daft Punk');
    expect(await page.textContent('#album')).toBe('Discovery');
    await page.waitForTimeout(500); // let the fade-in finish before the picture
    await page.screenshot({ path: artifactPath('overlay-transparent.png'), omitBackground: true });
    // The same overlay over a dark stream scene, to judge legibility.
    await page.evaluate(() => {
      (globalThis as unknown as InPage).document.documentElement.style.background = 'linear-gradient(135deg, #1b2735, #4b3a52)';
    });
    await page.screenshot({ path: artifactPath('overlay.png') });
    await page.evaluate(() => (globalThis as unknown as InPage).document.documentElement.style.removeProperty('background'));

    await t.restart();
    await page.waitForFunction(streamOpen, undefined, { timeout: 15_000 });
    await submit({ artist: 'Justice', title: 'Genesis', album: '†', coverurl: `${host.url}/second.png` });
    await waitForTitle(page, 'Genesis');
    expect(await (await waitForImage(page, '#cover', sha(covers.second))).jsonValue()).toBe(400);
  });

  it('When tracks change, then /slideshow shows the cover, crossfades to the artist images, and starts over with the next track', async () => {
    const page = await open('/slideshow?interval=2', { width: 1280, height: 720 });
    await submit({ artist: 'Röyksopp', title: 'Eple', album: 'Melody A.M.', coverurl: `${host.url}/third.png` });
    await waitForTitle(page, 'Eple');
    expect(await (await waitForImage(page, '.slide.active .photo', sha(covers.third))).jsonValue()).toBe(400);
    await page.waitForTimeout(1300); // crossfade done
    await page.screenshot({ path: artifactPath('slideshow-cover.png') });

    // The fanart arrives after the response and joins the cycle.
    expect(await (await waitForImage(page, '.slide.active .photo', sha(fanart))).jsonValue()).toBe(1280);
    await page.waitForTimeout(1300);
    await page.screenshot({ path: artifactPath('slideshow-fanart.png') });

    await submit({ artist: 'Daft Punk', title: 'Digital Love', album: 'Discovery', coverurl: `${host.url}/first.png` });
    await waitForTitle(page, 'Digital Love');
    expect(await (await waitForImage(page, '.slide.active .photo', sha(covers.first))).jsonValue()).toBe(400);
    expect(await page.evaluate(() => (globalThis as unknown as InPage).document.querySelectorAll('.slide.active').length)).toBe(1);

    await t.restart();
    await page.waitForFunction(streamOpen, undefined, { timeout: 15_000 });
    await submit({ artist: 'Justice', title: 'D.A.N.C.E.', coverurl: `${host.url}/second.png` });
    await waitForTitle(page, 'D.A.N.C.E.');
    expect(await (await waitForImage(page, '.slide.active .photo', sha(covers.second))).jsonValue()).toBe(400);
  });
});
