import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { eventually } from '../../helpers/eventually';
import { postJson } from '../../helpers/http';
import { serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { makePng, onePixelRgba } from '../../helpers/images';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// The OBS recipes of README.md "2. Put it in OBS", docs/chat-bots-and-obs.md and docs/first-hour.md
// "Styling the pages in OBS", run in Chromium (OBS's Browser source is Chromium) as the pages write
// them: the cover source's URL taken from the page, and the Custom CSS box's text injected whole
// as OBS injects it (one <style> appended to <head> once the page has loaded: obs-browser
// browser-client.cpp, BrowserClient::OnLoadEnd). The web-font request the CSS makes is answered
// inside the browser (Playwright's route), so nothing leaves the machine.

const ROOT = path.join(__dirname, '../../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const DOC_ORIGIN = 'http://127.0.0.1:8899';

interface InPage {
  document: {
    head: { appendChild(node: object): void };
    body: object;
    createElement(tag: string): { textContent: string | null; sheet?: { cssRules: ArrayLike<{ constructor: { name: string }; styleSheet?: unknown }> } };
    querySelector(selector: string): { src: string; complete: boolean; naturalWidth: number } | null;
    querySelectorAll(selector: string): { length: number };
    getElementById(id: string): object | null;
  };
  getComputedStyle(element: object): { fontFamily: string; backgroundColor: string; outlineColor: string };
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const covers = { first: makePng(200, 200, [240, 30, 30], [240, 30, 30]), second: makePng(200, 200, [30, 30, 240], [30, 30, 240]) };

/** The cover source's URL as a page writes it (the slideshow limited to the cover). */
function coverRecipeUrl(markdown: string): string {
  const found = new RegExp(`${DOC_ORIGIN.replace(/\./g, '\\.')}(/slideshow\\?[^\`\\s]*categories=cover[^\`\\s]*)`).exec(markdown);
  if (!found?.[1]) throw new Error('no cover recipe URL on the page');
  return found[1];
}

/** The first ```css block after `heading` on `page`. */
function cssBlockAfter(markdown: string, heading: string): string {
  const at = markdown.indexOf(`\n${heading}\n`);
  const block = /```css\n([\s\S]*?)```/.exec(markdown.slice(at));
  if (at < 0 || !block?.[1]) throw new Error(`no css block under "${heading}"`);
  return block[1];
}

describeWithChromium('the OBS recipes of the docs, in headless Chromium', () => {
  jest.setTimeout(60_000);
  let host: ImageHost;
  let t: TestServer;
  let browser: Browser | undefined;

  beforeAll(async () => {
    host = await startImageHost();
    host.route('/first.png', serveBytes(covers.first, 'image/png'));
    host.route('/second.png', serveBytes(covers.second, 'image/png'));
    t = await startTestServer({ config: { coverFetch: { allowPrivateAddresses: true } } });
  });
  afterAll(async () => {
    await t.close();
    await host.close();
  });
  afterEach(async () => {
    await browser?.close();
    browser = undefined;
  });

  const shownCover = (page: Page, key: string) =>
    page.waitForFunction((expected) => {
      const img = (globalThis as unknown as InPage).document.querySelector('.slide.active .photo');
      return img !== null && img.src.endsWith(`/cover/${expected}`) && img.complete && img.naturalWidth > 0;
    }, key);

  /** The colour near the left edge of the source (the test covers have a light disc in the middle) as OBS would composite it (transparent: alpha 0). */
  const edgePixel = async (page: Page): Promise<number[]> => {
    return onePixelRgba(await page.screenshot({ omitBackground: true, clip: { x: 20, y: 150, width: 1, height: 1 } }));
  };

  it('When the cover source of README.md and chat-bots-and-obs.md is set up, then it follows each track change and is transparent without a cover', async () => {
    const fromReadme = coverRecipeUrl(read('README.md'));
    expect(coverRecipeUrl(read('docs/chat-bots-and-obs.md'))).toBe(fromReadme);
    browser = await launchBrowser({ width: 300, height: 300 });
    const page = await browser.context.newPage();
    await page.goto(`${t.url}${fromReadme}`);
    await page.waitForFunction(
      () =>
        (globalThis as unknown as { document: { documentElement: { dataset: Record<string, string> } } }).document.documentElement.dataset.stream === 'open',
    );

    expect((await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'One', coverurl: `${host.url}/first.png` })).status).toBe(200);
    await shownCover(page, sha(covers.first));
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.querySelectorAll('.slide.active').length === 1);
    expect(
      await eventually(
        () => edgePixel(page),
        (pixel) => pixel.join() === '240,30,30,255',
        5000,
      ),
    ).toEqual([240, 30, 30, 255]);

    expect((await postJson(`${t.url}/v1/remoteinput`, { artist: 'B', title: 'Two', coverurl: `${host.url}/second.png` })).status).toBe(200);
    await shownCover(page, sha(covers.second));
    expect(
      await eventually(
        () => edgePixel(page),
        (pixel) => pixel.join() === '30,30,240,255',
        5000,
      ),
    ).toEqual([30, 30, 240, 255]);
    // No caption over the picture (caption=0).
    expect(await page.isVisible('#caption')).toBe(false);

    expect((await postJson(`${t.url}/v1/remoteinput`, { artist: 'C', title: 'No cover' })).status).toBe(200);
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.querySelectorAll('.slide.active').length === 0);
    expect(
      (
        await eventually(
          () => edgePixel(page),
          (pixel) => pixel[3] === 0,
          5000,
        )
      )[3],
    ).toBe(0);
  });

  const withCustomCss = async (css: string): Promise<Page> => {
    browser = await launchBrowser({ width: 800, height: 200 });
    const page = await browser.context.newPage();
    // The web font's stylesheet, answered in the browser: it marks the title so the test can see it applied.
    await page.route('https://fonts.googleapis.com/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/css', body: '#title { outline-color: rgb(9, 8, 7); }' }),
    );
    await page.goto(`${t.url}/`);
    await page.evaluate((text) => {
      const win = globalThis as unknown as InPage;
      const style = win.document.createElement('style');
      style.textContent = text;
      win.document.head.appendChild(style);
    }, css);
    return page;
  };

  const applied = (page: Page) =>
    page.evaluate(() => {
      const win = globalThis as unknown as InPage;
      const title = win.document.getElementById('title') as object;
      const card = win.document.getElementById('card') as object;
      return {
        imported: win.getComputedStyle(title).outlineColor,
        font: win.getComputedStyle(card).fontFamily,
        background: win.getComputedStyle(win.document.body).backgroundColor,
      };
    });

  it('When the Custom CSS box holds the CSS of first-hour.md as written, then the @import applies, and so do the default rule and the font rule', async () => {
    const css = cssBlockAfter(read('docs/first-hour.md'), '## Styling the pages in OBS');
    expect(css.split('\n')[0]).toMatch(/^@import url\("https:\/\/fonts\.googleapis\.com\//);
    const page = await withCustomCss(css);
    expect(
      await eventually(
        () => applied(page),
        (seen) => seen.imported === 'rgb(9, 8, 7)',
        5000,
      ),
    ).toEqual({
      imported: 'rgb(9, 8, 7)',
      font: '"Fira Sans", sans-serif',
      background: 'rgba(0, 0, 0, 0)',
    });
  });

  it('When the @import is put below the default rule (the old advice), then CSS ignores it: the trap the page warns of', async () => {
    const [importLine = '', ...rest] = cssBlockAfter(read('docs/first-hour.md'), '## Styling the pages in OBS').split('\n');
    const page = await withCustomCss([...rest, importLine].join('\n'));
    expect(
      (
        await eventually(
          () => applied(page),
          (seen) => seen.font === '"Fira Sans", sans-serif',
          5000,
        )
      ).font,
    ).toBe('"Fira Sans", sans-serif');
    expect((await applied(page)).imported).not.toBe('rgb(9, 8, 7)');
  });
});
