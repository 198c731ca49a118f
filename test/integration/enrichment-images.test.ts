import { TINY_PNG } from '../helpers/images';
import { enrichmentConfig, startFakeServices, type FakeServices } from '../fakes/services';
import { asObject, postJson, request } from '../helpers/http';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { connectClient, type Frame } from '../helpers/ws-client';
import { createHash } from 'node:crypto';

// Images go to the image store and reach the WebSocket stream as they arrive (docs/streams.md
// "The image store", docs/enrichment.md): enrichment finds image URLs (Cover Art Archive,
// Wikidata/Commons, TheAudioDB, fanart.tv), the image store downloads them from the (local)
// image host after the response, and every viewer gets a frame per image, cover first. A track seen before gets its cover without a download.

describe('enrichment images', () => {
  let fakes: FakeServices;
  let t: TestServer;
  const pngKey = createHash('sha256').update(TINY_PNG).digest('hex');

  beforeAll(async () => {
    fakes = await startFakeServices();
    t = await startTestServer({ config: enrichmentConfig(fakes) });
  });
  afterAll(async () => {
    await t.close();
    await fakes.close();
  });

  it('When a known track is submitted, then its images are stored and announced to viewers, cover first, and /v1/last gets the cover', async () => {
    const viewer = await connectClient(t.url);
    try {
      const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Massive Attack', title: 'Teardrop' });
      expect(res.status).toBe(200);
      const dbid = asObject(res.json).dbid;
      await t.server.images.idle();

      const imageFrames = (await viewer.waitFor((frame: Frame) => frame.type === 'image' && frame.dbid === dbid).then(() => viewer.frames)).filter(
        (frame) => frame.type === 'image' && frame.dbid === dbid,
      );
      expect(imageFrames[0]).toMatchObject({ category: 'cover', key: pngKey, url: `cover/${pngKey}`, mime_type: 'image/png', artist: 'Massive Attack' });
      const categories = new Set(imageFrames.map((frame) => frame.category));
      expect(categories.has('cover')).toBe(true);
      expect(categories.size).toBeGreaterThan(1);
      expect(fakes.imageHost.requests.length).toBeGreaterThan(0);

      const last = asObject((await request(`${t.url}/v1/last`)).json);
      expect(last.coverurl).toBe(`cover/${pngKey}`);
      const cover = await fetch(`${t.url}/${String(last.coverurl)}`);
      expect(cover.status).toBe(200);
      expect(cover.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await cover.arrayBuffer()).equals(TINY_PNG)).toBe(true);
    } finally {
      viewer.close();
    }
  });

  it('When the same track comes again, then the 200 already carries the cover and nothing is downloaded or looked up', async () => {
    fakes.reset();
    const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Massive Attack', title: 'Teardrop' });
    expect(asObject(asObject(res.json).processed_metadata).coverurl).toBe(`cover/${pngKey}`);
    await t.server.images.idle();
    expect(fakes.all()).toEqual([]);
  });
});
