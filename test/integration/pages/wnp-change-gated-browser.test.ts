import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { WebSocket } from 'ws';
import type { Enricher } from '../../../src/enrich/enricher';
import { artifactPath, describeWithChromium, launchBrowser, saveStrip, type Browser } from '../../helpers/browser';
import { asObject, postJson } from '../../helpers/http';
import { makePng } from '../../helpers/images';
import { serveBytes, startImageHost, type Handler, type ImageHost } from '../../helpers/image-host';
import { stampedReader } from '../../helpers/stamped-frames';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// One frame per change, default config (docs/whats-now-playing.md "One frame per change"), on
// What's Now Playing's stock image templates in real Chromium. The pages restate
// whatsnowplaying/wnp-templates' template-src/components/js/single-image-display.js (a new <img>
// per /wsstream frame from `<field>base64`, when the frame has a title or an artist) and
// generic-dj-display.js (the cover, else the artist thumbnail, and the title). The new track's
// submitted cover's host and its artist lookup (the provider that, like TheAudioDB, names the artist's
// thumbnail and banner) answer only when the test opens their gates: artist first, then cover.
// The pages sample what they show every 50 ms; a sample's image is its decoded width (1 is the
// transparent placeholder, -1 still decoding). Screenshots of the change go to test/artifacts/.

const oldCover = makePng(40, 40, [240, 80, 30], [40, 10, 120]);
const oldThumb = makePng(30, 40, [20, 160, 60], [250, 250, 250]);
const newCover = makePng(60, 60, [250, 210, 40], [200, 60, 20]);
const newThumb = makePng(36, 48, [20, 120, 240], [250, 250, 0]);
const newBanner = makePng(80, 20, [120, 40, 200], [10, 200, 120]);

/** A gate: `opened` resolves when the test opens it; `reached` when the first caller arrived at it. */
function gate(): { open(): void; opened: Promise<void>; reached: Promise<void>; arrive(): void } {
  let open: () => void = () => undefined;
  let arrive: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  return { open, opened, reached, arrive };
}

/** Serves `bytes` once the gate is open. */
function gated(bytes: Buffer, door: ReturnType<typeof gate>): Handler {
  return (request, response) => {
    door.arrive();
    void door.opened.then(() => serveBytes(bytes, 'image/png')(request, response));
  };
}

/** single-image-display.js for the cover, the artist thumbnail and the banner, with the title. */
function singleImagePage(svc: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>single image</title>
<style>body{margin:0;background:#222} span img{width:90px;height:90px;margin:6px;display:inline-block;background:repeating-conic-gradient(#555 0 25%,#333 0 50%) 0 0/16px 16px} .t{color:#eee;font:16px sans-serif;margin:6px}</style></head>
<body><div class="t" id="title"></div><span id="cover"></span><span id="thumb"></span><span id="banner"></span>
<script>
  window.samples = [];
  function show(id, field, metadata) {
    const img = document.createElement('img');
    img.src = 'data:image/png;base64,' + metadata[field + 'base64'];
    const box = document.getElementById(id);
    box.replaceChildren();
    if (metadata.title || metadata.artist) box.appendChild(img);
  }
  const ws = new WebSocket('ws://${svc}/wsstream?session_id=gated');
  ws.onmessage = (event) => {
    const metadata = JSON.parse(event.data);
    if (metadata.last) return;
    document.getElementById('title').textContent = metadata.title || '';
    show('cover', 'coverimage', metadata);
    show('thumb', 'artistthumbnail', metadata);
    show('banner', 'artistbanner', metadata);
  };
  const width = (id) => { const img = document.querySelector('#' + id + ' img'); return img && img.complete ? img.naturalWidth : -1; };
  setInterval(() => window.samples.push({ title: document.getElementById('title').textContent, cover: width('cover'), thumb: width('thumb'), banner: width('banner') }), 50);
</script></body></html>`;
}

/** generic-dj-display.js, restated, with the same sampler. */
function genericDjPage(svc: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>generic dj</title></head>
<body><img id="cover-image" alt="" style="width:90px;height:90px"><div id="track-title"></div>
<script>
  window.samples = [];
  const ws = new WebSocket('ws://${svc}/wsstream?session_id=dj');
  ws.onmessage = (event) => {
    const data = JSON.parse(event.data);
    if (data.last) return;
    const cover = document.getElementById('cover-image');
    if (data.coverimagebase64) cover.src = 'data:image/png;base64,' + data.coverimagebase64;
    else if (data.artistthumbnailbase64) cover.src = 'data:image/png;base64,' + data.artistthumbnailbase64;
    document.getElementById('track-title').textContent = data.title || '';
  };
  setInterval(() => { const img = document.getElementById('cover-image');
    window.samples.push({ title: document.getElementById('track-title').textContent, cover: img.complete ? img.naturalWidth : -1, thumb: 0, banner: 0 }); }, 50);
</script></body></html>`;
}

interface Sample {
  title: string;
  cover: number;
  thumb: number;
  banner: number;
}
type InPage = { samples: Sample[] };

/** The artist lookup (as TheAudioDB would): once its gate opens, it names Four Tet's thumbnail and banner. */
function providers(host: ImageHost, artistLookup: ReturnType<typeof gate>): Enricher[] {
  const artist: Enricher = {
    name: 'test-artist',
    enrich: async (track) => {
      if (track.artist !== 'Four Tet') return null;
      artistLookup.arrive();
      await artistLookup.opened;
      return {
        images: [
          { category: 'thumbnail', url: `${host.url}/new-thumb.png`, source: 'test-artist' },
          { category: 'banner', url: `${host.url}/new-banner.png`, source: 'test-artist' },
        ],
      };
    },
  };
  return [artist];
}

describeWithChromium('One frame per change on WNP’s templates, with a cover host and an artist lookup that answer when released', () => {
  jest.setTimeout(90_000);
  let host: ImageHost;
  let t: TestServer;
  let browser: Browser;
  const artistLookup = gate();
  const coverHost = gate();

  beforeAll(async () => {
    host = await startImageHost();
    host.route('/old-cover.png', serveBytes(oldCover, 'image/png'));
    host.route('/old-thumb.png', serveBytes(oldThumb, 'image/png'));
    host.route('/new-cover.png', gated(newCover, coverHost));
    host.route('/new-thumb.png', serveBytes(newThumb, 'image/png'));
    host.route('/new-banner.png', serveBytes(newBanner, 'image/png'));
    // The default config; only the wait is long enough that the gates, opened by the test, always come within it.
    t = await startTestServer({
      config: {
        coverFetch: { allowPrivateAddresses: true },
        wsstream: { completeWaitSeconds: 30 },
        enrichment: { deadlineSeconds: 30 },
        processingTimeoutSeconds: 40,
      },
      plan: [providers(host, artistLookup)],
    });
    const svc = new URL(t.url).host;
    host.route('/single.html', serveBytes(Buffer.from(singleImagePage(svc)), 'text/html; charset=utf-8'));
    host.route('/generic-dj.html', serveBytes(Buffer.from(genericDjPage(svc)), 'text/html; charset=utf-8'));
    expect(
      (await postJson(`${t.url}/v1/remoteinput`, { artist: 'Bonobo', title: 'Kerala', album: 'Migration', coverurl: `${host.url}/old-cover.png` })).status,
    ).toBe(200);
    await t.server.images.link((await t.server.tracks.current()) ?? (undefined as never), [
      { category: 'thumbnail', key: (await t.server.imageStore.put(oldThumb)).key, source: 'test' },
    ]);
    await t.server.images.idle();
    browser = await launchBrowser({ width: 360, height: 150 });
  });
  afterAll(async () => {
    artistLookup.open();
    coverHost.open();
    await t?.server.images.idle();
    await browser?.close();
    await t?.close();
    await host?.close();
  });

  it('When a new track’s cover and artist images come late, then no frame of the change shows a transparent image, the old track stays until then, and each text keeps its own images; Lumia’s first frame has the cover URL and the requester', async () => {
    const single = await browser.context.newPage();
    await single.goto(`${host.url}/single.html`);
    const dj = await browser.context.newPage();
    await dj.goto(`${host.url}/generic-dj.html`);
    const onScreen = (page: Page, title: string) =>
      page.waitForFunction((wanted) => (globalThis as unknown as InPage).samples.some((s) => s.title === wanted && s.cover > 1), title);
    await onScreen(single, 'Kerala');
    await onScreen(dj, 'Kerala');
    // Lumia's plugin reads plain /wsstream and alerts on the first frame of a track.
    const lumia = await stampedReader(`${t.url.replace(/^http/, 'ws')}/wsstream`, false);
    await lumia.waitFor((frame) => frame.title === 'Kerala');
    const fromLumia = lumia.frames.length;
    expect((await postJson(`${t.url}/v1/requests`, { requester: 'viewer9', artist: 'Four Tet', title: 'Baby' })).status).toBe(200);
    const images = new WebSocket(`${t.url.replace(/^http/, 'ws')}/v1/images/ws`);
    const answers: Record<string, unknown>[] = [];
    const answered = new Set<() => void>();
    images.on('message', (data) => {
      answers.push(JSON.parse((data as Buffer).toString()) as Record<string, unknown>);
      for (const wake of [...answered]) wake();
    });
    const answer = (match: (frame: Record<string, unknown>) => boolean) =>
      new Promise<number>((resolve) => {
        const check = () => {
          const index = answers.findIndex(match);
          if (index < 0) return;
          answered.delete(check);
          resolve(index);
        };
        answered.add(check);
        check();
      });
    await new Promise((resolve) => images.once('open', resolve));
    const shots: Buffer[] = [];
    const shoot = async () => shots.push(await single.screenshot());
    await shoot();

    // The DJ software sends the cover's URL; its host answers when the test opens its gate.
    const posted = postJson(`${t.url}/v1/remoteinput`, { artist: 'Four Tet', title: 'Baby', album: 'New Energy', coverurl: `${host.url}/new-cover.png` });
    await Promise.all([artistLookup.reached, coverHost.reached]);
    // The fanart slideshow asks for the new artist's thumbnail while it is looked up: it waits,
    // and a hello asked after it is answered first (no head-of-line).
    images.send(JSON.stringify({ type: 'get_images', data_type: 'artist', category: 'thumbnail', parameters: { artist: 'four tet' } }));
    images.send(JSON.stringify({ type: 'hello' }));
    await answer((frame) => frame.type === 'welcome');
    expect(answers.some((frame) => frame.type === 'image_data' || frame.type === 'no_image')).toBe(false);
    await shoot();
    artistLookup.open();
    const thumbAnswer = await answer((frame) => frame.type === 'image_data' || frame.type === 'no_image');
    expect(answers[thumbAnswer]).toMatchObject({ type: 'image_data', category: 'thumbnail', image_data: newThumb.toString('base64') });
    await shoot();
    coverHost.open();
    expect((await posted).status).toBe(200);
    await onScreen(single, 'Baby');
    await onScreen(dj, 'Baby');
    await single.waitForFunction(() => (globalThis as unknown as InPage).samples.filter((s) => s.title === 'Baby').length >= 6);
    await shoot();
    shots.forEach((shot, index) => fs.writeFileSync(artifactPath(`wnp-change-slow-cover-${index + 1}.png`), shot));
    await saveStrip(browser, shots, 'wnp-change-slow-cover-strip.png', { width: 360, height: 150 });

    for (const page of [single, dj]) {
      const samples = await page.evaluate(() => (globalThis as unknown as InPage).samples);
      const isDj = page === dj;
      // Never the placeholder, on either track; each title only ever beside its own images.
      expect(samples.filter((s) => s.cover === 1 || s.thumb === 1 || (s.title === 'Baby' && s.banner === 1))).toEqual([]);
      const kerala = samples.filter((s) => s.title === 'Kerala' && s.cover > 0);
      const baby = samples.filter((s) => s.title === 'Baby' && s.cover > 0);
      // Kerala's artist has no banner: svc never had one, the only placeholder allowed.
      expect(kerala.length).toBeGreaterThan(0);
      expect(kerala.every((s) => s.cover === 40 && (isDj || s.thumb === 30))).toBe(true);
      expect(baby.every((s) => s.cover === 60 && (isDj || (s.thumb === 36 && s.banner === 80)))).toBe(true);
      // The old track stayed on screen until the new one came whole.
      const firstBaby = samples.findIndex((s) => s.title === 'Baby');
      expect(samples.slice(0, firstBaby).every((s) => s.title === 'Kerala' || s.title === '')).toBe(true);
    }

    // Lumia: one frame for the new track, with its cover URL and its requester.
    const first = await lumia.waitFor((frame) => frame.title === 'Baby', fromLumia);
    expect(String(first.frame.coverurl)).toMatch(/^cover\/[0-9a-f]{64}$/);
    expect(first.frame.requester).toBe('viewer9');
    expect(first.frame.coverimagebase64).toBe(newCover.toString('base64'));
    await t.server.images.idle();
    expect((await postJson(`${t.url}/v1/remoteinput`, { artist: 'Bonobo', title: 'Cirrus' })).status).toBe(200);
    await lumia.waitFor((frame) => frame.title === 'Cirrus', fromLumia);
    // The same play again changes nothing on screen: no frame; the next track's frame follows Cirrus's.
    expect(asObject((await postJson(`${t.url}/v1/remoteinput`, { artist: 'Bonobo', title: 'Cirrus' })).json).dbid).toBeDefined();
    expect((await postJson(`${t.url}/v1/remoteinput`, { artist: 'Bonobo', title: 'Kong' })).status).toBe(200);
    await lumia.waitFor((frame) => frame.title === 'Kong', fromLumia);
    expect(lumia.frames.slice(fromLumia).map((entry) => entry.frame.title)).toEqual(['Baby', 'Cirrus', 'Kong']);
    lumia.close();
    images.close();
    await single.close();
    await dj.close();
  });
});
