import type { Enricher } from '../../../src/enrich/enricher';
import { artifactPath, describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { postJson } from '../../helpers/http';
import { makePng } from '../../helpers/images';
import { serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// A page that speaks to svc the way What's Now Playing's stock templates do, in real Chromium.
// The protocol, restated from whatsnowplaying/whats-now-playing
// nowplaying/templates/whatsnowplaying-websocket.js (the browser client library: WebSocket to
// `ws://<host>:<port>/wsstream?session_id=<id>`, JSON.parse of each message, nothing done on
// `{"last": true}`, reconnect on close) and whatsnowplaying/wnp-templates
// template-src/components/js/coverslideshow-complex.js (a second socket to `/v1/images/ws` that
// sends `hello` in onopen, then on each new track several `get_images` for the album cover, and
// draws every `image_data` answer as `data:image/png;base64,...`; the templates draw
// `coverimagebase64` the same way). The page below is our own, written from those facts.

const cover = makePng(300, 300, [240, 80, 30], [40, 10, 120]);
const artistThumb = makePng(120, 160, [20, 160, 60], [250, 250, 250]);

/** "Finds" an artist thumbnail (as TheAudioDB or fanart.tv would) for tracks by Bonobo. */
function artistThumbnails(host: ImageHost): Enricher {
  return {
    name: 'test-artist-thumbs',
    enrich: async (track) =>
      track.artist === 'Bonobo' ? { images: [{ category: 'thumbnail', url: `${host.url}/thumb.png`, source: 'test-artist-thumbs' }] } : null,
  };
}

/**
 * What's Now Playing's stock artist-thumbnail template, restated from whatsnowplaying/wnp-templates:
 * template-src/configs/image-templates.yaml (`ws-artistthumb-nofade`: websocket-base, the
 * `single-image-display` script, `image_field: artistthumbnail`) and
 * components/js/single-image-display.js (on every /wsstream frame: a new <img> whose src is
 * `data:image/png;base64,` + `metadata[image_field + 'base64']`, shown when the frame has a title
 * or an artist). The page is our own, written from those facts.
 */
function artistThumbPage(svcHostPort: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>artist thumbnail</title></head>
<body style="background:#111">
<div id="image-display"></div>
<script>
  const imageField = 'artistthumbnail';
  function open() {
    const ws = new WebSocket('ws://${svcHostPort}/wsstream?session_id=thumb');
    ws.onmessage = (event) => {
      const metadata = JSON.parse(event.data);
      if (metadata.last) return;
      const img = document.createElement('img');
      img.src = 'data:image/png;base64,' + metadata[imageField + 'base64'];
      const display = document.getElementById('image-display');
      display.replaceChildren();
      if (metadata.title || metadata.artist) display.appendChild(img);
      window.lastArtist = metadata.artist;
    };
    ws.onclose = () => setTimeout(open, 1000);
  }
  open();
</script></body></html>`;
}

function templatePage(svcHostPort: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>wnp-style template</title></head>
<body style="background:#111;color:#eee;font:24px sans-serif">
<h1 id="title"></h1><div id="artist"></div><img id="cover" alt="">
<div id="slides"></div>
<script>
  window.imageFrames = [];
  window.trackFrames = 0;
  let images = null;
  function openImages() {
    images = new WebSocket('ws://${svcHostPort}/v1/images/ws');
    images.onopen = () => images.send(JSON.stringify({ type: 'hello' }));
    images.onmessage = (event) => {
      const answer = JSON.parse(event.data);
      window.imageFrames.push(answer.type);
      if (answer.type === 'image_data' && answer.data_type === 'album' && answer.category === 'cover') {
        const img = document.createElement('img');
        img.className = 'slide';
        img.src = 'data:image/png;base64,' + answer.image_data;
        document.getElementById('slides').appendChild(img);
      }
    };
    images.onclose = () => setTimeout(openImages, 1000);
  }
  function askCovers(artist, album) {
    for (let i = 0; i < 3; i++) {
      setTimeout(() => images.send(JSON.stringify({ type: 'get_images', data_type: 'album', category: 'cover', parameters: { artist, album } })), i * 100);
    }
  }
  function openTrack() {
    const ws = new WebSocket('ws://${svcHostPort}/wsstream?session_id=test');
    ws.onmessage = (event) => {
      const data = JSON.parse(event.data);
      if (data.last) return;
      window.trackFrames++;
      document.getElementById('title').textContent = data.title || '';
      document.getElementById('artist').textContent = data.artist || '';
      document.getElementById('cover').src = 'data:image/png;base64,' + data.coverimagebase64;
      if (data.album && images && images.readyState === WebSocket.OPEN) askCovers(data.artist, data.album);
    };
    ws.onclose = () => setTimeout(openTrack, 1000);
  }
  openImages();
  openTrack();
</script></body></html>`;
}

interface InPage {
  document: {
    getElementById(id: string): { textContent: string | null; complete: boolean; naturalWidth: number } | null;
    querySelectorAll(selector: string): ArrayLike<{ complete: boolean; naturalWidth: number }>;
  };
  imageFrames: string[];
  trackFrames: number;
}

describeWithChromium("a What's Now Playing style template in headless Chromium", () => {
  jest.setTimeout(60_000);
  let host: ImageHost;
  let t: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    host = await startImageHost();
    host.route('/cover.png', serveBytes(cover, 'image/png'));
    host.route('/thumb.png', serveBytes(artistThumb, 'image/png'));
    t = await startTestServer({ config: { coverFetch: { allowPrivateAddresses: true } }, plan: [[artistThumbnails(host)]] });
    host.route('/template.html', serveBytes(Buffer.from(templatePage(new URL(t.url).host)), 'text/html; charset=utf-8'));
    host.route('/artistthumb.html', serveBytes(Buffer.from(artistThumbPage(new URL(t.url).host)), 'text/html; charset=utf-8'));
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
    await host.close();
  });

  it('When a track with a cover is submitted, then the title and the cover appear, and the image socket gets only answers', async () => {
    browser = await launchBrowser({ width: 800, height: 600 });
    const page = await browser.context.newPage();
    await page.goto(`${host.url}/template.html`);
    // Both sockets are up (the track socket says nothing until a track plays).
    await page.waitForFunction(() => (globalThis as unknown as InPage).imageFrames.includes('welcome'));

    const res = await postJson(`${t.url}/v1/remoteinput`, {
      artist: 'Jon Hopkins',
      title: 'Open Eye Signal',
      album: 'Immunity',
      coverurl: `${host.url}/cover.png`,
    });
    expect(res.status).toBe(200);

    await page.waitForFunction(() => (globalThis as unknown as InPage).document.getElementById('title')?.textContent === 'Open Eye Signal');
    await page.waitForFunction(() => {
      const img = (globalThis as unknown as InPage).document.getElementById('cover');
      return img !== null && img.complete && img.naturalWidth === 300;
    });
    await page.waitForFunction(() => {
      const slides = (globalThis as unknown as InPage).document.querySelectorAll('img.slide');
      // The template asks again on every /wsstream frame: the bare title first (no cover stored yet,
      // docs/title-first.md), then each update; at least one round of three asks finds the cover.
      return slides.length >= 3 && Array.from(slides).every((img) => img.complete && img.naturalWidth === 300);
    });
    await page.screenshot({ path: artifactPath('wnp-template.png') });
    const seen = await page.evaluate(() => (globalThis as unknown as InPage).imageFrames);
    // Only answers to its own requests: never a pushed track or image frame.
    expect(seen[0]).toBe('welcome');
    expect(seen.filter((type) => type !== 'welcome' && type !== 'image_data' && type !== 'no_image')).toEqual([]);
    expect(seen.filter((type) => type === 'image_data').length).toBeGreaterThanOrEqual(3);
  });

  it("When the artist has a thumbnail, then What's Now Playing's artist-thumbnail template shows it; without one it shows a transparent image, not a broken icon", async () => {
    browser ??= await launchBrowser({ width: 800, height: 600 });
    const page = await browser.context.newPage();
    await page.goto(`${host.url}/artistthumb.html`);
    /** The shown image's natural width once it has loaded or failed (0 for a broken image), else null. */
    const shown = () => {
      const img = (globalThis as unknown as InPage).document.querySelectorAll('#image-display img')[0];
      return img?.complete ? img.naturalWidth : null;
    };

    expect((await postJson(`${t.url}/v1/remoteinput`, { artist: 'Boards of Canada', title: 'Roygbiv' })).status).toBe(200);
    await page.waitForFunction(() => (globalThis as unknown as { lastArtist?: string }).lastArtist === 'Boards of Canada');
    // A decoded 1x1 image: a broken one has naturalWidth 0.
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.querySelectorAll('#image-display img')[0]?.complete === true);
    expect(await page.evaluate(shown)).toBe(1);

    expect((await postJson(`${t.url}/v1/remoteinput`, { artist: 'Bonobo', title: 'Kerala' })).status).toBe(200);
    await page.waitForFunction(() => {
      const img = (globalThis as unknown as InPage).document.querySelectorAll('#image-display img')[0];
      return img !== undefined && img.complete && img.naturalWidth === 120;
    });
    await page.screenshot({ path: artifactPath('wnp-artistthumb-template.png') });
  });
});
