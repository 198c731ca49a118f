import type { Page } from 'playwright-core';
import { artifactPath, describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { until } from '../../helpers/eventually';
import { postJson } from '../../helpers/http';
import { serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/chat-bots-and-obs.md "Server-Sent Events", in real Chromium. The HTML standard fails an
// EventSource's connection for good (readyState CLOSED, no reconnect) when the answer is not a 200
// `text/event-stream`: web-platform-tests eventsource/request-status-error checks that a 503 (and
// 204, 205, 210, 299, 404, 410) fires `error` once with readyState CLOSED. A reader whose replay the
// busy pool cannot serve now therefore gets a 200 stream that sends it back with its own id
// (src/server/sse/frames.ts busyAnswer), and the browser reconnects by itself after `retry:`.
//
// The pool of expensive answers runs one job at a time (docs/limits-and-load.md "Expensive
// requests"): the test holds the store's replay read, so the first replay holds the slot and every
// other one waits its 5 s and is put off. Three EventSources of a widget on another origin
// (`?since=1`, `2`, `3`: each its own replay, since readers that missed the same records share one
// read, src/server/streams/sse/event-stream.ts) and the /history page's queue panel (public/queue.js, back with its Last-Event-ID
// after a restart) meet that. Each must stay alive, then get every missed dbid once, in order.

const SOURCES = 3;

function widgetPage(svcUrl: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>widget</title></head><body><script>
  for (let index = 0; index < ${SOURCES}; index += 1) new EventSource('${svcUrl}/v1/events?since=' + (index + 1));
</script></body></html>`;
}

/** Watches every EventSource a page makes (the page's own code unchanged): what it got and its state. */
const WATCH_EVENT_SOURCES = `(() => {
  const Native = window.EventSource;
  window.__sources = [];
  window.EventSource = class extends Native {
    constructor(...args) {
      super(...args);
      const seen = { ids: [], busy: 0, opens: 0, closedOnError: 0 };
      window.__sources.push({ seen, source: this });
      this.addEventListener('open', () => { seen.opens += 1; });
      this.addEventListener('busy', () => { seen.busy += 1; });
      this.addEventListener('track', (event) => { seen.ids.push(Number(event.lastEventId)); });
      this.addEventListener('error', () => { if (this.readyState === Native.CLOSED) seen.closedOnError += 1; });
    }
  };
})();`;

interface Seen {
  ids: number[];
  busy: number;
  opens: number;
  closedOnError: number;
  readyState: number;
}
interface InPage {
  __sources: { seen: Omit<Seen, 'readyState'>; source: { readyState: number } }[];
}

function sources(page: Page): Promise<Seen[]> {
  return page.evaluate(() =>
    (globalThis as unknown as InPage).__sources.map(({ seen, source }) => ({ ...seen, ids: [...seen.ids], readyState: source.readyState })),
  );
}

/** Put off (busy) or, before, refused for good: either way the source has met the busy server. */
const metBusy = (seen: Seen) => seen.busy > 0 || seen.closedOnError > 0;

/** A hang guard for the one browser scenario (Chromium's start and four readers), not a duration it must meet. */
const SCENARIO_GUARD = 120_000;

describeWithChromium('EventSource readers while the replay is put off (busy), in headless Chromium', () => {
  let host: ImageHost;
  let t: TestServer;
  let browser: Browser | undefined;
  let release = () => undefined as void;

  beforeAll(async () => {
    host = await startImageHost();
    t = await startTestServer({ config: { secret: 'busy-secret' } });
    host.route('/widget.html', serveBytes(Buffer.from(widgetPage(t.url)), 'text/html; charset=utf-8'));
  });
  afterAll(async () => {
    release();
    await browser?.close();
    await t.close();
    await host.close();
  });

  it(
    'When a replay is put off, then no EventSource is closed: each comes back by itself and gets every missed dbid once, in order',
    async () => {
      const auth = { 'X-SVC-Client-Auth': 'busy-secret' };
      const dbids: number[] = [];
      const submit = async (n: number) =>
        dbids.push(((await postJson(`${t.url}/v1/remoteinput`, { artist: `Artist ${n}`, title: `Title ${n}` }, auth)).json as { dbid: number }).dbid);
      for (let n = 0; n < 6; n += 1) await submit(n);

      browser = await launchBrowser({ width: 1000, height: 480 });
      await browser.context.addInitScript(WATCH_EVENT_SOURCES);
      const queuePage = await browser.context.newPage();
      await queuePage.goto(`${t.url}/history#secret=busy-secret`);
      await queuePage.locator('#queue-note', { hasText: 'No requests waiting.' }).waitFor();
      await until(async () => (await sources(queuePage))[0]?.ids.at(-1) === dbids.at(-1), 'the queue panel’s stream had the current track');

      // The stream ends; queue.js's EventSource comes back with Last-Event-ID after its retry (3 s).
      await t.restart();
      const held = new Promise<void>((resolve) => (release = resolve));
      const since = t.server.tracks.since.bind(t.server.tracks);
      jest.spyOn(t.server.tracks, 'since').mockImplementation(async (...args) => {
        await held;
        return since(...args);
      });
      for (let n = 6; n < 9; n += 1) await submit(n);
      const widget = await browser.context.newPage();
      await widget.goto(`${host.url}/widget.html`);
      await until(async () => (await sources(widget)).length === SOURCES, 'the widget made its EventSources');

      // One replay holds the pool's slot; the others (and any retry of them) are put off.
      await until(
        async () => (await sources(queuePage)).every(metBusy) && (await sources(widget)).filter(metBusy).length >= SOURCES - 1,
        'the queue panel and the widget met the busy server',
        60_000,
      );
      release();
      await until(
        async () => [...(await sources(queuePage)), ...(await sources(widget))].every((seen) => seen.ids.at(-1) === dbids.at(-1) || seen.readyState === 2),
        'every source caught up or was closed',
        60_000,
      );
      const queueSeen = await sources(queuePage);
      const widgetSeen = await sources(widget);
      await widget.screenshot({ path: artifactPath('events-busy-widget.png') });
      for (const seen of [...queueSeen, ...widgetSeen]) {
        expect(seen.closedOnError).toBe(0);
        expect(seen.readyState).toBe(1);
      }
      // The queue panel opened on the current track; after the restart, the tracks it missed, each once.
      expect(queueSeen[0].ids).toEqual(dbids.slice(5));
      widgetSeen.forEach((seen, index) => expect(seen.ids).toEqual(dbids.slice(index + 1)));

      // The queue panel's stream is live again: a new request appears without a reload.
      expect((await postJson(`${t.url}/v1/requests`, { requester: 'viewer1', artist: 'Radiohead', title: 'Creep' }, auth)).status).toBe(200);
      await queuePage.locator('#queue-list li', { hasText: 'Radiohead – Creep for viewer1' }).waitFor({ timeout: 30_000 });
    },
    SCENARIO_GUARD,
  );
});
