import type { Page } from 'playwright-core';
import { describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// OBS Browser Source's "Custom CSS": once the page has loaded, OBS runs a script in the page that
// appends a <style> element holding the user's CSS to <head> (obsproject/obs-browser
// browser-client.cpp, BrowserClient::OnLoadEnd). That script comes from the host, like
// playwright's evaluate, so only style-src decides whether the CSS applies. The pages must let
// it apply and still refuse scripts that are not our own files.

interface InPage {
  document: {
    head: { appendChild(node: object): void };
    body: object;
    documentElement: { dataset: Record<string, string | undefined> };
    createElement(tag: string): { textContent: string | null; src?: string };
    createTextNode(text: string): object;
    getElementById(id: string): object | null;
  };
  getComputedStyle(element: object): { color: string; backgroundColor: string };
}

describeWithChromium('overlay pages and OBS custom CSS, in headless Chromium', () => {
  jest.setTimeout(60_000);
  let t: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());
  afterEach(() => browser.close());

  const open = async (path: string): Promise<{ page: Page; violations: string[] }> => {
    browser = await launchBrowser({ width: 800, height: 200 });
    const page = await browser.context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await page.goto(`${t.url}${path}`);
    return { page, violations };
  };

  it.each(['/', '/slideshow'])('When custom CSS is injected into %s as OBS does, then it applies', async (path) => {
    const { page, violations } = await open(path);
    const css = 'body { background-color: rgb(1, 2, 3) !important; }';
    await page.evaluate((text) => {
      const win = globalThis as unknown as InPage;
      const style = win.document.createElement('style');
      (style as unknown as { appendChild(node: object): void }).appendChild(win.document.createTextNode(text));
      win.document.head.appendChild(style);
    }, css);
    const background = await page.evaluate(() => {
      const win = globalThis as unknown as InPage;
      return win.getComputedStyle(win.document.body).backgroundColor;
    });
    expect(background).toBe('rgb(1, 2, 3)');
    expect(violations).toEqual([]);
  });

  it('When an inline script is injected into the page, then it does not run', async () => {
    const { page, violations } = await open('/');
    await page.evaluate(() => {
      const win = globalThis as unknown as InPage;
      const script = win.document.createElement('script');
      script.textContent = 'document.documentElement.dataset.injected = "ran"';
      win.document.head.appendChild(script);
    });
    expect(await page.evaluate(() => (globalThis as unknown as InPage).document.documentElement.dataset.injected ?? 'blocked')).toBe('blocked');
    expect(violations.join('\n')).toMatch(/script-src/);
  });
});
