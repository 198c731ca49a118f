import { artifactPath, describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { postJson } from '../../helpers/http';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// The song-request panel of GET /history (public/queue.js; docs/song-requests.md) in headless
// Chromium: the queue from GET /v1/requests with the secret from the page's #fragment, kept live
// by the request events of /v1/events: a request appears when it is queued and goes when its track
// plays. The screenshot goes to test/artifacts/history-queue.png.

const SECRET = 'queue-panel-secret';
const AUTH = { 'X-SVC-Client-Auth': SECRET };

describeWithChromium('the request queue panel of /history in headless Chromium', () => {
  jest.setTimeout(60_000);
  let t: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestServer({ config: { secret: SECRET } });
    browser = await launchBrowser({ width: 1000, height: 480 });
  });
  afterAll(async () => {
    await browser.close();
    await t.close();
  });

  it('When a request is queued and then played, then the panel shows it and then drops it, without a reload', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${t.url}/history#secret=${SECRET}`);
    await page.locator('#queue-note', { hasText: 'No requests waiting.' }).waitFor();
    expect((await postJson(`${t.url}/v1/requests`, { requester: 'viewer1', artist: 'Radiohead', title: 'Creep' }, AUTH)).status).toBe(200);
    expect((await postJson(`${t.url}/v1/requests`, { requester: 'viewer2', query: 'Nirvana - Breed' }, AUTH)).status).toBe(200);
    await page.locator('#queue-list li').nth(1).waitFor();
    expect(await page.locator('#queue-list li').allTextContents()).toEqual(['Radiohead – Creep for viewer1', 'Nirvana – Breed for viewer2']);
    expect(await page.locator('#queue-count').textContent()).toBe('(2)');
    await page.screenshot({ path: artifactPath('history-queue.png') });
    expect((await postJson(`${t.url}/v1/remoteinput`, { artist: 'Radiohead', title: 'Creep' }, AUTH)).status).toBe(200);
    await page.locator('#queue-count', { hasText: '(1)' }).waitFor();
    expect(await page.locator('#queue-list li').allTextContents()).toEqual(['Nirvana – Breed for viewer2']);
    await page.close();
  });

  it('When the page has no secret and svc has one, then the panel says how to give it', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${t.url}/history`);
    await page.locator('#queue-note', { hasText: 'needs svc’s secret' }).waitFor();
    await page.close();
  });
});
