import zlib from 'node:zlib';
import { WebSocket, type RawData } from 'ws';
import type { Enricher } from '../../src/enrich/enricher';
import { postJson, request } from '../helpers/http';
import { makePng, PNG_SIGNATURE } from '../helpers/images';
import { serveBytes, startImageHost, type ImageHost } from '../helpers/image-host';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { TRANSPARENT_PNG_BASE64 as TRANSPARENT_BASE64 } from '../../src/domain/image';

// /wsstream as What's Now Playing's overlay templates read it. Facts from
// whatsnowplaying/whats-now-playing: nowplaying/processes/webserver.py (websocket_streamer:
// sends the last track as soon as there is one, then one frame per update, `{"last": true}` when
// it stops; _base64ifier/_transparentifier: blobs go out as `...base64` fields, a missing cover as
// a transparent PNG, `dbid` removed) and nowplaying/templates/whatsnowplaying-websocket.js (the
// browser library: connects to `/wsstream?session_id=...`, JSON-parses each frame, returns early
// on `data.last`, reconnects on close). The artist images: webserver.py _wss_do_update sends
// every blob of nowplaying/db.py METADATABLOBLIST (`artistbannerraw`, `artistfanartraw`,
// `artistlogoraw`, `artistthumbnailraw`, `coverimageraw`) renamed `...base64`, a transparent
// PNG for each missing one; the artist-image templates of whatsnowplaying/wnp-templates
// (template-src/configs/image-templates.yaml: image_field `artistthumbnail`, `artistbanner`,
// `artistlogo`; components/js/single-image-display.js) read `metadata[image_field + 'base64']`
// into `data:image/png;base64,...`, so a missing key is a broken image.

const cover = makePng(16, 16, [0, 150, 250], [250, 250, 0]);
const thumb = makePng(20, 20, [90, 0, 90], [0, 200, 200]);
const ARTIST_IMAGE_KEYS = ['artistthumbnailbase64', 'artistbannerbase64', 'artistlogobase64', 'artistfanartbase64'];

/** "Finds" an artist thumbnail for the track titled "With Thumbnail", after the response (background download). */
function thumbnailFor(host: ImageHost): Enricher {
  return {
    name: 'test-thumbs',
    enrich: async (track) =>
      track.title === 'With Thumbnail' ? { images: [{ category: 'thumbnail', url: `${host.url}/thumb.png`, source: 'test-thumbs' }] } : null,
  };
}

interface StreamClient {
  socket: WebSocket;
  frames: Record<string, unknown>[];
  next(): Promise<Record<string, unknown>>;
  closed: Promise<number>;
}

/** A frame's text (ws hands over a Buffer, an ArrayBuffer or fragments). */
function frameText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data).toString('utf8');
}

async function connectStream(httpUrl: string, query = ''): Promise<StreamClient> {
  const socket = new WebSocket(`${httpUrl.replace(/^http/, 'ws')}/wsstream?session_id=test-session${query}`);
  const frames: Record<string, unknown>[] = [];
  const waiting: ((frame: Record<string, unknown>) => void)[] = [];
  let read = 0;
  socket.on('message', (data) => {
    const frame = JSON.parse(frameText(data)) as Record<string, unknown>;
    frames.push(frame);
    waiting.shift()?.(frame);
  });
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return {
    socket,
    frames,
    closed,
    next() {
      const index = read;
      read += 1;
      const ready = frames[index];
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

/** Width, height, colour type and the raw pixel rows of a PNG (enough for a 1x1 image). */
function decodePng(bytes: Buffer): { width: number; height: number; colourType: number; rows: Buffer } {
  expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  let offset = 8;
  let header: Buffer | undefined;
  const data: Buffer[] = [];
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('ascii', offset + 4, offset + 8);
    const body = bytes.subarray(offset + 8, offset + 8 + length);
    expect(bytes.readUInt32BE(offset + 8 + length)).toBe(zlib.crc32(bytes.subarray(offset + 4, offset + 8 + length)) >>> 0);
    if (type === 'IHDR') header = body;
    if (type === 'IDAT') data.push(body);
    offset += 12 + length;
  }
  if (!header) throw new Error('no IHDR');
  return { width: header.readUInt32BE(0), height: header.readUInt32BE(4), colourType: header[9] ?? -1, rows: zlib.inflateSync(Buffer.concat(data)) };
}

describe('/wsstream', () => {
  let host: ImageHost;
  let t: TestServer;
  const sockets: WebSocket[] = [];
  const connect = async (query = '') => {
    const client = await connectStream(t.url, query);
    sockets.push(client.socket);
    return client;
  };

  beforeAll(async () => {
    host = await startImageHost();
    host.route('/cover.png', serveBytes(cover, 'image/png'));
    host.route('/thumb.png', serveBytes(thumb, 'image/png'));
    t = await startTestServer({ config: { coverFetch: { allowPrivateAddresses: true } }, plan: [[thumbnailFor(host)]] });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.terminate();
    await t.close();
    await host.close();
  });

  it('When nothing has played, then a client gets nothing; the first track then arrives with a transparent 1x1 PNG as its cover and no dbid', async () => {
    const client = await connect();
    // A message from the client is ignored (What's Now Playing's pages send none on this socket).
    client.socket.send('last');
    const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Burial', title: 'Archangel', isrc: ['GBBKS0700011'], bpm: '139' });
    expect(res.status).toBe(200);
    const frame = await client.next();
    const { coverimagebase64, artistthumbnailbase64, artistbannerbase64, artistlogobase64, artistfanartbase64, ...fields } = frame;
    expect(fields).toEqual({ artist: 'Burial', title: 'Archangel', isrc: ['GBBKS0700011'], bpm: 139 });
    for (const image of [coverimagebase64, artistthumbnailbase64, artistbannerbase64, artistlogobase64, artistfanartbase64]) {
      const png = decodePng(Buffer.from(String(image), 'base64'));
      expect({ width: png.width, height: png.height, colourType: png.colourType }).toEqual({ width: 1, height: 1, colourType: 6 });
      // One row: filter byte, then R, G, B, A, all zero: fully transparent.
      expect([...png.rows]).toEqual([0, 0, 0, 0, 0]);
    }
    expect(client.frames).toHaveLength(1);
  });

  it('When a track with a cover becomes current, then a default client gets one frame with the cover (and the cover for the missing thumbnail), a ?complete=0 client the bare frame first', async () => {
    const client = await connect();
    const titleFirst = await connect('&complete=0');
    expect((await client.next()).title).toBe('Archangel');
    expect((await titleFirst.next()).title).toBe('Archangel');
    await postJson(`${t.url}/v1/remoteinput`, { artist: 'Four Tet', title: 'Baby', coverurl: `${host.url}/cover.png` });
    // One frame per change (docs/whats-now-playing.md): the old track stays until the cover is in.
    const frame = await client.next();
    expect(frame).toMatchObject({ artist: 'Four Tet', title: 'Baby' });
    expect(String(frame.coverurl)).toMatch(/^cover\/[0-9a-f]{64}$/);
    expect(Buffer.from(String(frame.coverimagebase64), 'base64').equals(cover)).toBe(true);
    // WNP's coverfornothumbs: the cover stands in for the thumbnail the artist lacks.
    expect(frame.artistthumbnailbase64).toBe(frame.coverimagebase64);
    expect(frame.artistbannerbase64).toBe(TRANSPARENT_BASE64);
    expect(frame.dbid).toBeUndefined();
    // Title first on request (docs/title-first.md): the track without its cover, then the update with it.
    const bare = await titleFirst.next();
    expect(bare).toMatchObject({ artist: 'Four Tet', title: 'Baby' });
    expect(bare.coverurl).toBeUndefined();
    expect((await titleFirst.next()).coverimagebase64).toBe(frame.coverimagebase64);
  });

  it('When a client connects while a track is current, then it gets that track at once', async () => {
    const client = await connect();
    const frame = await client.next();
    expect(frame.title).toBe('Baby');
    expect(Buffer.from(String(frame.coverimagebase64), 'base64').equals(cover)).toBe(true);
  });

  it('When an artist thumbnail arrives after the response, then the frame is sent again with artistthumbnailbase64 and the other artist keys stay transparent', async () => {
    const client = await connect();
    await client.next();
    const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Bonobo', title: 'With Thumbnail' });
    expect(res.status).toBe(200);
    let frame = await client.next();
    while (frame.title !== 'With Thumbnail' || frame.artistthumbnailbase64 === TRANSPARENT_BASE64) frame = await client.next();
    expect(Buffer.from(String(frame.artistthumbnailbase64), 'base64').equals(thumb)).toBe(true);
    for (const key of ARTIST_IMAGE_KEYS.filter((name) => name !== 'artistthumbnailbase64')) expect(frame[key]).toBe(TRANSPARENT_BASE64);
    await t.server.images.idle();
    // One thumbnail, one more frame: no frame after it for the same image.
    expect(client.frames.at(-1)).toBe(frame);
  });

  it('When /wsstream is fetched without a WebSocket upgrade, then 426', async () => {
    const res = await request(`${t.url}/wsstream`);
    expect(res.status).toBe(426);
  });

  it('When the server shuts down, then each client gets {"last": true} and a close with 1001', async () => {
    const own = await startTestServer();
    try {
      await postJson(`${own.url}/v1/remoteinput`, { artist: 'A', title: 'T' });
      const client = await connectStream(own.url);
      expect((await client.next()).title).toBe('T');
      const closing = own.server.close();
      expect(await client.next()).toEqual({ last: true });
      expect(await client.closed).toBe(1001);
      await closing;
    } finally {
      await own.close();
    }
  });
});
