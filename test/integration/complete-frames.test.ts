import { createHash } from 'node:crypto';
import { WebSocket } from 'ws';
import type { Enricher } from '../../src/enrich/enricher';
import { TRANSPARENT_PNG_BASE64 } from '../../src/domain/image';
import { TINY_PNG } from '../helpers/images';
import { enrichmentConfig, startFakeServices } from '../fakes/services';
import { TEARDROP } from '../fixtures/ids';
import { asObject, postJson, request } from '../helpers/http';
import { makePng } from '../helpers/images';
import { afterDelay, serveBytes, startImageHost, type Handler, type ImageHost } from '../helpers/image-host';
import { stampedReader } from '../helpers/stamped-frames';
import { startTestServer, type TestServer, type TestServerOptions } from '../helpers/test-server';

// Complete frames (docs/decisions.md "Complete frames"; docs/whats-now-playing.md): the first
// frame of a track carries what svc already knows (the image store: the same release's cover, the
// same artist's images; the lookup cache: the fields enrichment found before), `get_images` waits
// for a cover that is being fetched, `/wsstream?complete=1` sends one frame per track once it has
// settled, and /wsartistfanartstream shows the artist's fanart.

const cover = makePng(40, 40, [240, 80, 30], [40, 10, 120]);
const thumb = makePng(30, 40, [20, 160, 60], [250, 250, 250]);
const fanartA = makePng(64, 36, [200, 0, 0], [0, 0, 0]);
const fanartB = makePng(64, 36, [0, 0, 200], [0, 0, 0]);
const base64 = (bytes: Buffer) => bytes.toString('base64');
const ws = (url: string) => url.replace(/^http/, 'ws');

/** "Finds" the image host's thumbnail and fanart for Bonobo, and the slow cover for the album "Slow". */
function hostImages(host: ImageHost): Enricher {
  return {
    name: 'test-images',
    enrich: async (track) => {
      if (track.album === 'Slow') return { images: [{ category: 'cover', url: `${host.url}/slow-cover.png`, source: 'test-images' }] };
      if (track.artist !== 'Bonobo') return null;
      return {
        images: [
          { category: 'thumbnail', url: `${host.url}/thumb.png`, source: 'test-images' },
          { category: 'fanart', url: `${host.url}/fanart-a.png`, source: 'test-images' },
          { category: 'fanart', url: `${host.url}/fanart-b.png`, source: 'test-images' },
        ],
      };
    },
  };
}

describe('complete frames', () => {
  let host: ImageHost;
  let t: TestServer | undefined;
  beforeAll(async () => {
    host = await startImageHost();
    host.route('/cover.png', serveBytes(cover, 'image/png'));
    host.route('/thumb.png', serveBytes(thumb, 'image/png'));
    host.route('/fanart-a.png', serveBytes(fanartA, 'image/png'));
    host.route('/fanart-b.png', serveBytes(fanartB, 'image/png'));
    host.route('/slow-cover.png', afterDelay(1500, serveBytes(cover, 'image/png')));
  });
  afterAll(() => host.close());
  afterEach(async () => {
    await t?.server.images.idle();
    await t?.close();
    t = undefined;
  });
  const start = async (config: Record<string, unknown> = {}, ws?: TestServerOptions['ws']) => {
    t = await startTestServer({ config: { coverFetch: { allowPrivateAddresses: true }, ...config }, plan: [[hostImages(host)]], ...(ws ? { ws } : {}) });
    return t;
  };

  it('When the store already holds the release’s cover and the artist’s images, then the first /wsstream frame and the first push frames of the next track carry them: no transparent image', async () => {
    const server = await start();
    expect(
      (await postJson(`${server.url}/v1/remoteinput`, { artist: 'Bonobo', title: 'Kerala', album: 'Migration', coverurl: `${host.url}/cover.png` })).status,
    ).toBe(200);
    await server.server.images.idle();
    const stream = await stampedReader(`${ws(server.url)}/wsstream`, false);
    const push = await stampedReader(`${ws(server.url)}/v1/images/ws`, true);
    try {
      await stream.waitFor((frame) => frame.title === 'Kerala');
      const from = stream.frames.length;
      // Another track of the same album, sent without a cover.
      const answer = postJson(`${server.url}/v1/remoteinput`, { artist: 'Bonobo', title: 'Break Apart', album: 'Migration' });
      const first = (await stream.waitFor((frame) => frame.title === 'Break Apart', from)).frame;
      expect(first.coverimagebase64).toBe(base64(cover));
      expect(first.artistthumbnailbase64).toBe(base64(thumb));
      expect([base64(fanartA), base64(fanartB)]).toContain(first.artistfanartbase64);
      expect(first.coverurl).toBe(`cover/${createHash('sha256').update(cover).digest('hex')}`);
      const track = await push.waitFor((frame) => frame.type === 'track' && asObject(frame.track).title === 'Break Apart');
      expect(asObject(track.frame.track).coverurl).toBe(first.coverurl);
      await push.waitFor((frame) => frame.type === 'image' && frame.dbid === track.frame.dbid && frame.category === 'thumbnail');
      expect((await answer).status).toBe(200);
    } finally {
      stream.close();
      push.close();
    }
  });

  it('When nothing is known of a track, then its first frame has the transparent placeholder, and the cover follows', async () => {
    const server = await start();
    const stream = await stampedReader(`${ws(server.url)}/wsstream?complete=0`, false);
    try {
      const answer = postJson(`${server.url}/v1/remoteinput`, { artist: 'Unknown', title: 'New', coverurl: `${host.url}/cover.png` });
      const first = (await stream.waitFor((frame) => frame.title === 'New')).frame;
      expect(first.coverimagebase64).toBe(TRANSPARENT_PNG_BASE64);
      await stream.waitFor((frame) => frame.title === 'New' && frame.coverimagebase64 === base64(cover));
      expect((await answer).status).toBe(200);
    } finally {
      stream.close();
    }
  });

  it('When get_images asks for an album cover that is being downloaded, then it waits and answers image_data with it, not no_image', async () => {
    const server = await start();
    const client = new WebSocket(`${ws(server.url)}/v1/images/ws`);
    const answers: Record<string, unknown>[] = [];
    client.on('message', (data) => answers.push(JSON.parse((data as Buffer).toString()) as Record<string, unknown>));
    await new Promise((resolve) => client.once('open', resolve));
    const stream = await stampedReader(`${ws(server.url)}/wsstream?complete=0`, false);
    try {
      client.send(JSON.stringify({ type: 'hello' }));
      const answer = postJson(`${server.url}/v1/remoteinput`, { artist: 'Tycho', title: 'Awake', album: 'Slow' });
      const bare = await stream.waitFor((frame) => frame.title === 'Awake');
      expect(bare.frame.coverimagebase64).toBe(TRANSPARENT_PNG_BASE64);
      const askedAt = performance.now();
      client.send(JSON.stringify({ type: 'get_images', data_type: 'album', category: 'cover', parameters: { artist: 'tycho', album: 'SLOW' } }));
      const arrived = await stream.waitFor((frame) => frame.title === 'Awake' && frame.coverimagebase64 === base64(cover));
      await new Promise<void>((resolve) => {
        const check = () => (answers.some((frame) => frame.type === 'image_data' || frame.type === 'no_image') ? resolve() : setTimeout(check, 20));
        check();
      });
      const reply = answers.find((frame) => frame.type === 'image_data' || frame.type === 'no_image');
      expect(reply?.type).toBe('image_data');
      expect(reply?.image_data).toBe(base64(cover));
      // It was asked before the cover arrived (the download takes 1.5 s).
      expect(askedAt).toBeLessThan(arrived.at);
      expect((await answer).status).toBe(200);
    } finally {
      stream.close();
      client.close();
    }
  });

  it('When a reader asks ?complete=1, then it gets one frame per track, after the slow cover arrived; a plain reader got the bare title first', async () => {
    const server = await start();
    const complete = await stampedReader(`${ws(server.url)}/wsstream?complete=1`, false);
    const plain = await stampedReader(`${ws(server.url)}/wsstream?complete=0`, false);
    try {
      expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Tycho', title: 'Dive', album: 'Slow' })).status).toBe(200);
      await plain.waitFor((frame) => frame.title === 'Dive' && frame.coverimagebase64 === base64(cover));
      const only = await complete.waitFor((frame) => frame.title === 'Dive');
      expect(only.frame.coverimagebase64).toBe(base64(cover));
      expect(plain.frames[0]?.frame.coverimagebase64).toBe(TRANSPARENT_PNG_BASE64);
      expect(plain.frames.length).toBeGreaterThan(1);
      // The next track, to show that nothing more came for the first one in between.
      expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Tycho', title: 'Montana' })).status).toBe(200);
      await complete.waitFor((frame) => frame.title === 'Montana');
      expect(complete.frames.map((entry) => entry.frame.title)).toEqual(['Dive', 'Montana']);
    } finally {
      complete.close();
      plain.close();
    }
  });

  it('When the config is the default, then a plain /wsstream reader (the Lumia plugin) gets one frame per track with its slow cover, and ?complete=0 still gets every update', async () => {
    const server = await start();
    const lumia = await stampedReader(`${ws(server.url)}/wsstream`, false);
    const every = await stampedReader(`${ws(server.url)}/wsstream?complete=0`, false);
    try {
      expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Tycho', title: 'Glider', album: 'Slow' })).status).toBe(200);
      await lumia.waitFor((frame) => frame.title === 'Glider');
      await every.waitFor((frame) => frame.title === 'Glider' && frame.coverimagebase64 === base64(cover));
      expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Tycho', title: 'Epoch' })).status).toBe(200);
      await lumia.waitFor((frame) => frame.title === 'Epoch');
      expect(lumia.frames.map((entry) => [entry.frame.title, entry.frame.coverimagebase64 === base64(cover), typeof entry.frame.coverurl])).toEqual([
        ['Glider', true, 'string'],
        ['Epoch', false, 'undefined'],
      ]);
      expect(every.frames.length).toBeGreaterThan(2);
    } finally {
      lumia.close();
      every.close();
    }
  });

  it('When wsstream.complete is false, then a plain /wsstream reader gets the bare title first and ?complete=1 still waits', async () => {
    const server = await start({ wsstream: { complete: false } });
    const plain = await stampedReader(`${ws(server.url)}/wsstream`, false);
    const complete = await stampedReader(`${ws(server.url)}/wsstream?complete=1`, false);
    try {
      expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Tycho', title: 'Weather', album: 'Slow' })).status).toBe(200);
      await complete.waitFor((frame) => frame.title === 'Weather');
      expect(plain.frames[0]?.frame.coverimagebase64).toBe(TRANSPARENT_PNG_BASE64);
      expect(complete.frames.map((entry) => entry.frame.coverimagebase64 === base64(cover))).toEqual([true]);
    } finally {
      plain.close();
      complete.close();
    }
  });

  it('When a cover host never answers, then the one frame goes out when wsstream.completeWaitSeconds has passed, with the placeholder, and the old track stayed until then', async () => {
    const stuck: Handler = () => undefined;
    host.route('/never.png', stuck);
    const server = await start({ wsstream: { completeWaitSeconds: 0.3 } });
    const stream = await stampedReader(`${ws(server.url)}/wsstream`, false);
    try {
      expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Tycho', title: 'Before' })).status).toBe(200);
      await stream.waitFor((frame) => frame.title === 'Before');
      const answer = postJson(`${server.url}/v1/remoteinput`, { artist: 'Tycho', title: 'Stuck', coverurl: `${host.url}/never.png` });
      const frame = await stream.waitFor((entry) => entry.title === 'Stuck');
      expect(frame.frame.coverimagebase64).toBe(TRANSPARENT_PNG_BASE64);
      expect(stream.frames.map((entry) => entry.frame.title)).toEqual(['Before', 'Stuck']);
      // The submission goes on (its cover download gives up within the processing budget).
      void answer.catch(() => undefined);
    } finally {
      stream.close();
    }
  });

  it('When ?preview is asked while nothing plays, then WNP’s sample track comes; ?sample always; the real track replaces the preview', async () => {
    const server = await start();
    const preview = await stampedReader(`${ws(server.url)}/wsstream?preview=1`, false);
    const sample = await stampedReader(`${ws(server.url)}/wsstream?sample`, false);
    try {
      const first = await preview.waitFor((frame) => frame.title === 'Sample Track Title');
      expect(first.frame).toMatchObject({
        artist: 'Sample Artist',
        album: 'Sample Album',
        genre: 'Electronic',
        duration: 225,
        coverimagebase64: TRANSPARENT_PNG_BASE64,
      });
      await sample.waitFor((frame) => frame.artist === 'Sample Artist');
      expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Tycho', title: 'Real' })).status).toBe(200);
      await preview.waitFor((frame) => frame.title === 'Real');
      const later = await stampedReader(`${ws(server.url)}/wsstream?sample=1`, false);
      await later.waitFor((frame) => frame.title === 'Sample Track Title');
      later.close();
      expect(sample.frames.map((entry) => entry.frame.title)).toEqual(['Sample Track Title']);
    } finally {
      preview.close();
      sample.close();
    }
  });

  it('When wsstream.coverForNoThumbs is false, then a track without an artist thumbnail sends the placeholder there and /artistthumb.png is transparent; by default both show the cover', async () => {
    for (const coverForNoThumbs of [true, false]) {
      const server = await start({ wsstream: { coverForNoThumbs } });
      const stream = await stampedReader(`${ws(server.url)}/wsstream`, false);
      try {
        expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Nobody', title: 'Plain', coverurl: `${host.url}/cover.png` })).status).toBe(200);
        const frame = await stream.waitFor((entry) => entry.title === 'Plain' && entry.coverimagebase64 === base64(cover));
        expect(frame.frame.artistthumbnailbase64).toBe(coverForNoThumbs ? base64(cover) : TRANSPARENT_PNG_BASE64);
        const thumbnail = Buffer.from(await (await fetch(`${server.url}/artistthumb.png`)).arrayBuffer());
        expect(thumbnail.equals(coverForNoThumbs ? cover : Buffer.from(TRANSPARENT_PNG_BASE64, 'base64'))).toBe(true);
      } finally {
        stream.close();
        await server.server.images.idle();
        await server.close();
        t = undefined;
      }
    }
  });

  it('When /wsartistfanartstream is open, then it sends the track with one of the artist’s fanarts every few seconds, and the cover for an artist without fanart', async () => {
    // The slideshow's timer, ticked by hand: built with the configured interval, a new frame on each tick.
    const ticks: (() => void)[] = [];
    const intervals: number[] = [];
    const fanartEvery = (tick: () => void, ms: number) => {
      ticks.push(tick);
      intervals.push(ms);
      return () => void ticks.splice(ticks.indexOf(tick), 1);
    };
    const server = await start({ wsstream: { fanartSeconds: 1 } }, { fanartEvery });
    expect(
      (await postJson(`${server.url}/v1/remoteinput`, { artist: 'Bonobo', title: 'Kerala', album: 'Migration', coverurl: `${host.url}/cover.png` })).status,
    ).toBe(200);
    await server.server.images.idle();
    const fanart = await stampedReader(`${ws(server.url)}/wsartistfanartstream?session_id=x`, false);
    try {
      const first = await fanart.waitFor((frame) => frame.title === 'Kerala');
      expect(intervals).toEqual([1000]);
      for (const tick of ticks) tick();
      const second = await fanart.waitFor((frame) => frame.title === 'Kerala', fanart.frames.indexOf(first) + 1);
      for (const frame of [first.frame, second.frame]) expect([base64(fanartA), base64(fanartB)]).toContain(frame.artistfanartbase64);
      expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Nobody', title: 'Plain', coverurl: `${host.url}/cover.png` })).status).toBe(200);
      await fanart.waitFor((frame) => frame.title === 'Plain' && frame.artistfanartbase64 === base64(cover));
    } finally {
      fanart.close();
    }
    expect((await request(`${server.url}/wsartistfanartstream`)).status).toBe(426);
  });
});

describe('complete frames from the lookup cache', () => {
  it('When a track was enriched before, then the first frame of its next play carries what enrichment found and its cover, before any service could answer', async () => {
    const fakes = await startFakeServices();
    const t = await startTestServer({ config: { ...enrichmentConfig(fakes), dedupeSeconds: 0 } });
    try {
      const once = asObject((await postJson(`${t.url}/v1/remoteinput`, { artist: 'Massive Attack', title: 'Teardrop' })).json);
      expect(asObject(once.processed_metadata).musicbrainzrecordingid).toBe(TEARDROP);
      await t.server.images.idle();
      const stream = await stampedReader(`${ws(t.url)}/wsstream?complete=0`, false);
      // Every outside service holds its answers until the first frame is in: the frame cannot have waited for them.
      const release = fakes.hold();
      try {
        await stream.waitFor((frame) => frame.title === 'Teardrop');
        const from = stream.frames.length;
        const again = postJson(`${t.url}/v1/remoteinput`, { artist: 'Massive Attack', title: 'Teardrop' });
        const first = await stream.waitFor((frame) => frame.title === 'Teardrop', from);
        release();
        expect(first.frame.musicbrainzrecordingid).toBe(TEARDROP);
        expect(first.frame.coverimagebase64).toBe(TINY_PNG.toString('base64'));
        expect((await again).status).toBe(200);
        // The run from the cache alone is silent: its misses are the normal case.
        expect(t.logs.join('\n')).not.toMatch(/not in the lookup cache/);
      } finally {
        release();
        stream.close();
      }
    } finally {
      await t.server.images.idle();
      await t.close();
      await fakes.close();
    }
  });
});
