import { createHash } from 'node:crypto';
import { WebSocket } from 'ws';
import type { Enricher } from '../../../src/enrich/enricher';
import { asObject, postJson, request } from '../../helpers/http';
import { makePng } from '../../helpers/images';
import { afterDelay, serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { closeCode, openRawWs, parseFrames } from '../../helpers/raw-ws';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { connectClient, type Frame, type FrameClient } from '../../helpers/ws-client';
import { withoutPlayFields } from '../../helpers/play-fields';

// /v1/images/ws with real clients: what is pushed unprompted (track on connect and on change,
// then images as they become available, also after the HTTP response), the image clients'
// requests over a real socket, limits, heartbeat and shutdown.

const cover = makePng(32, 32, [220, 30, 90], [20, 20, 60]);
const fanart = makePng(64, 36, [10, 120, 200], [240, 240, 200]);
const lateCover = makePng(24, 24, [30, 200, 90], [0, 40, 0]);
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** An enricher that "finds" images on the local image host (the cover before the response, the rest after). */
function imagesFrom(host: ImageHost): Enricher {
  return {
    name: 'test-images',
    enrich: async (track) => {
      if (track.title !== 'Late Images') return null;
      return {
        images: [
          { category: 'fanart', url: `${host.url}/fanart.png`, source: 'test-images' },
          { category: 'cover', url: `${host.url}/late-cover.png`, source: 'test-images' },
        ],
      };
    },
  };
}

describe('/v1/images/ws', () => {
  let host: ImageHost;
  let t: TestServer;
  const clients: FrameClient[] = [];
  const connect = async () => {
    const client = await connectClient(t.url);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    host = await startImageHost();
    host.route('/cover.png', serveBytes(cover, 'image/png'));
    host.route('/fanart.png', afterDelay(400, serveBytes(fanart, 'image/png')));
    host.route('/late-cover.png', afterDelay(200, serveBytes(lateCover, 'image/png')));
    t = await startTestServer({ config: { coverFetch: { allowPrivateAddresses: true } }, plan: [[imagesFrom(host)]] });
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await t.close();
    await host.close();
  });

  it('When nothing is playing, then a new client gets no frame until it asks; hello is answered with welcome', async () => {
    const client = await connect();
    const welcome = await client.ask({ type: 'hello', client: 'test' });
    expect(welcome).toEqual({ type: 'welcome', server: 'svc', version: expect.any(String), status: 'ready' });
    expect(client.frames).toEqual([welcome]);
  });

  it('When a track with a cover is submitted, then every client gets the bare track frame, its update with the cover, and the cover image frame', async () => {
    const watchers = [await connect(), await connect()];
    const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Björk', title: 'Jóga', album: 'Homogenic', coverurl: `${host.url}/cover.png` });
    const { dbid } = asObject(res.json);
    const last = asObject((await request(`${t.url}/v1/last`)).json);
    for (const client of watchers) {
      // Title first (docs/title-first.md): the bare record, then the same dbid with its cover.
      const bare = await client.waitFor((frame) => frame.type === 'track' && frame.dbid === dbid);
      expect({ ...bare, track: withoutPlayFields(bare.track) }).toEqual({
        type: 'track',
        dbid,
        artist: 'Björk',
        title: 'Jóga',
        album: 'Homogenic',
        track: { dbid, artist: 'Björk', title: 'Jóga', album: 'Homogenic' },
      });
      // The play log's fields ride along (docs/play-log.md "Where it shows").
      expect(bare.track).toMatchObject({ channel: 'main', kind: 'music', ended_at: null });
      const track = await client.waitFor((frame) => frame.type === 'track' && frame.dbid === dbid && 'coverurl' in asObject(frame.track));
      expect(track).toEqual({ type: 'track', dbid, artist: 'Björk', title: 'Jóga', album: 'Homogenic', track: last });
      const image = await client.waitFor((frame) => frame.type === 'image' && frame.dbid === dbid);
      expect(image).toEqual({
        type: 'image',
        dbid,
        category: 'cover',
        key: sha(cover),
        url: `cover/${sha(cover)}`,
        mime_type: 'image/png',
        artist: 'Björk',
        title: 'Jóga',
        album: 'Homogenic',
      });
      // The image belongs to a track the client already has (its update may come either side of it).
      expect(client.frames.indexOf(bare)).toBeLessThan(client.frames.indexOf(image));
      const served = await fetch(new URL(String(image.url), `${t.url}/`));
      expect(Buffer.from(await served.arrayBuffer()).equals(cover)).toBe(true);
    }
  });

  it('When a client connects later, then it is pushed the current track and its images unprompted', async () => {
    const dbid = asObject((await request(`${t.url}/v1/last`)).json).dbid;
    const client = await connect();
    await client.waitFor((frame) => frame.type === 'image');
    expect(client.frames.map((frame) => [frame.type, frame.dbid, frame.category])).toEqual([
      ['track', dbid, undefined],
      ['image', dbid, 'cover'],
    ]);
  });

  it('When enrichment finds a cover, then the 200 carries it; the other images download after the response and their frames still reach every client, cover first', async () => {
    const watchers = [await connect(), await connect()];
    const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Björk', title: 'Late Images', album: 'Post' });
    const { dbid, processed_metadata } = asObject(res.json);
    expect(asObject(processed_metadata).coverurl).toBe(`cover/${sha(lateCover)}`);
    const fanartFramesAtResponse = watchers.map(
      (client) => client.frames.filter((frame) => frame.type === 'image' && frame.dbid === dbid && frame.category === 'fanart').length,
    );
    expect(fanartFramesAtResponse).toEqual([0, 0]);

    for (const client of watchers) {
      const images: Frame[] = [];
      images.push(await client.waitFor((frame) => frame.type === 'image' && frame.dbid === dbid && frame.category === 'cover'));
      images.push(await client.waitFor((frame) => frame.type === 'image' && frame.dbid === dbid && frame.category === 'fanart'));
      expect(images.map((frame) => frame.key)).toEqual([sha(lateCover), sha(fanart)]);
    }
    const last = asObject((await request(`${t.url}/v1/last`)).json);
    expect(last.coverurl).toBe(`cover/${sha(lateCover)}`);
  });

  it('When a provider offers an image it offered before, then it is linked again without a second download', async () => {
    const client = await connect();
    const downloads = host.requests.length;
    const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Björk', title: 'Late Images', album: 'Post' });
    const { dbid } = asObject(res.json);
    await client.waitFor((frame) => frame.type === 'image' && frame.dbid === dbid && frame.category === 'fanart', { timeoutMs: 2000 });
    expect(client.frames.filter((frame) => frame.type === 'image' && frame.dbid === dbid).map((frame) => frame.key)).toEqual([sha(lateCover), sha(fanart)]);
    expect(host.requests.length).toBe(downloads);
  });

  it('When an image client asks get_images and list_images, then the answers carry the stored images', async () => {
    const client = await connect();
    const data = await client.ask({ type: 'get_images', category: 'fanart', data_type: 'artist', parameters: { artist: 'bjork' } });
    expect(data).toMatchObject({ type: 'image_data', data_type: 'artist', category: 'fanart', artist: 'bjork', mime_type: 'image/png', key: sha(fanart) });
    expect(Buffer.from(String(data.image_data), 'base64').equals(fanart)).toBe(true);

    const album = await client.ask({ type: 'get_images', category: 'cover', data_type: 'album', parameters: { artist: 'Björk', album: 'Homogenic' } });
    expect(Buffer.from(String(album.image_data), 'base64').equals(cover)).toBe(true);

    const list = await client.ask({ type: 'list_images', category: 'cover', data_type: 'artist', parameters: { artist: 'Björk' } });
    expect(list).toMatchObject({ type: 'error', error_code: 'UNSUPPORTED_CATEGORY' });
    const covers = await client.ask({ type: 'list_images', category: 'cover', data_type: 'album', parameters: { artist: 'Björk', album: 'Post' } });
    expect(covers).toMatchObject({ type: 'image_list', cache_keys: [sha(lateCover)], total: 1 });

    const none = await client.ask({ type: 'get_images', category: 'banner', data_type: 'artist', parameters: { artist: 'Björk' } });
    expect(none).toMatchObject({ type: 'no_image', category: 'banner' });
  });

  it('When a client sends broken JSON, a binary frame or an unknown type, then it gets an error and stays connected', async () => {
    const client = await connect();
    expect(await client.ask('{nope')).toEqual({ type: 'error', error_code: 'INVALID_JSON', message: 'Invalid JSON in message' });
    const from = client.frames.length;
    client.socket.send(Buffer.from([1, 2, 3]));
    expect(await client.waitFor((frame) => frame.type === 'error', { from })).toMatchObject({ error_code: 'BAD_STRUCTURE' });
    expect(await client.ask({ type: 'dance' })).toMatchObject({ error_code: 'UNKNOWN_MESSAGE_TYPE' });
    expect(await client.ask({ type: 'hello' })).toMatchObject({ type: 'welcome' });
  });

  it('When a client sends a message over 64 KiB, then it is refused by closing with 1009', async () => {
    const client = await connect();
    client.socket.send(JSON.stringify({ type: 'hello', padding: 'x'.repeat(64 * 1024) }));
    expect((await client.closed).code).toBe(1009);
  });
});

describe('/v1/images/ws heartbeat and shutdown', () => {
  it('When a peer stops answering pings, then it is dropped; a live client stays; shutdown closes with 1001', async () => {
    const t = await startTestServer({ ws: { pingIntervalMs: 150 } });
    try {
      const deaf = await openRawWs(t.url); // completes the handshake, never answers a ping
      const live = await connectClient(t.url);
      await deaf.ended;
      const pings = parseFrames(deaf.received()).filter((frame) => frame.opcode === 0x9);
      expect(pings.length).toBeGreaterThanOrEqual(1);
      // The marker: a track change after the deaf peer was dropped still reaches the live client.
      const { dbid } = asObject((await postJson(`${t.url}/v1/remoteinput`, { artist: 'Still', title: 'Here' })).json);
      await live.waitFor((frame) => frame.type === 'track' && frame.dbid === dbid);
      expect(live.socket.readyState).toBe(WebSocket.OPEN);

      const closing = t.server.close();
      expect((await live.closed).code).toBe(1001);
      await closing;
    } finally {
      await t.close();
    }
  });
});

describe('/v1/images/ws fan-out', () => {
  it('When 500 clients are connected, then every one of them receives a track change', async () => {
    const t = await startTestServer();
    const clients: FrameClient[] = [];
    try {
      for (let batch = 0; batch < 10; batch += 1) {
        clients.push(...(await Promise.all(Array.from({ length: 50 }, () => connectClient(t.url)))));
      }
      const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Crowd', title: 'Five Hundred' });
      const { dbid } = asObject(res.json);
      const received = await Promise.all(
        clients.map((client) => client.waitFor((frame) => frame.type === 'track' && frame.dbid === dbid, { timeoutMs: 10_000 })),
      );
      expect(received).toHaveLength(500);
      expect(new Set(received.map((frame) => frame.title))).toEqual(new Set(['Five Hundred']));
    } finally {
      for (const client of clients) client.socket.terminate();
      await t.close();
    }
  });

  it('When one client stops reading, then a fast client keeps getting every frame and the slow one is closed with 1013', async () => {
    // Records up to 1 MiB here (the default bound is 64 KiB), so a few frames fill the socket buffers.
    const t = await startTestServer({ ws: { maxBufferedBytes: 256 * 1024 }, config: { limits: { maxFields: 500, maxRecordBytes: 1024 * 1024 } } });
    try {
      const slow = await openRawWs(t.url);
      slow.socket.pause(); // a stuck viewer: the server's writes pile up
      const fast = await connectClient(t.url);
      // Frames of ~400 KB fill the kernel's socket buffers quickly.
      const bigFields = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`field${i}`, 'x'.repeat(1000)]));
      for (let i = 0; i < 60 && !t.logs.some((line) => line.includes('too slow')); i += 1) {
        const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Big', title: `Frame ${i}`, ...bigFields });
        const { dbid } = asObject(res.json);
        // Every frame reaches the fast client while the stuck one is still connected (5 s: a hang guard).
        await fast.waitFor((frame) => frame.type === 'track' && frame.dbid === dbid, { timeoutMs: 5000 });
      }
      expect(t.logs.some((line) => line.includes('too slow'))).toBe(true);
      expect(fast.socket.readyState).toBe(WebSocket.OPEN);

      slow.socket.resume();
      const deadline = Date.now() + 10_000;
      while (closeCode(parseFrames(slow.received())) === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(closeCode(parseFrames(slow.received()))).toBe(1013);
      slow.socket.destroy();
      fast.close();
    } finally {
      await t.close();
    }
  });
});
