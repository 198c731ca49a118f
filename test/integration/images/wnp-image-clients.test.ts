import { createHash } from 'node:crypto';
import { WebSocket, type RawData } from 'ws';
import { nameKey } from '../../../src/images/names';
import { asObject, postJson } from '../../helpers/http';
import { fakeJpeg, makePng } from '../../helpers/images';
import { serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { openRawWs, sendText } from '../../helpers/raw-ws';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { connectClient, wsUrl, type Frame } from '../../helpers/ws-client';

// /v1/images/ws with the two kinds of client docs/decisions.md describes.
//
// What's Now Playing's image clients are request/response clients: its own tests
// (whatsnowplaying/whats-now-playing tests/webserver/test_webserver_images_websocket.py) connect,
// send `hello` (or a request) at once and take the very next frame as the answer; its server
// (nowplaying/webserver/images_websocket.py) answers one message after the other and sends
// nothing unsolicited. The cover-slideshow template (whatsnowplaying/wnp-templates
// template-src/components/js/coverslideshow-complex.js) sends `hello` in `onopen`, then five
// `get_images` 500 ms apart, and treats every frame as an answer. The client below restates that:
// it sends on open and reads frames strictly in order.

const cover = makePng(40, 40, [200, 40, 40], [30, 30, 90]);
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

interface StrictClient {
  socket: WebSocket;
  /** The next frame, in arrival order; never skips one. */
  next(): Promise<Frame>;
  /** Sends a message and returns the next frame, which must be its answer. */
  ask(message: unknown): Promise<Frame>;
  received: Frame[];
}

/** Connects and sends `first` in the open handler, as WNP's clients do. */
function strictClient(httpUrl: string, first: unknown): Promise<StrictClient> {
  const socket = new WebSocket(wsUrl(httpUrl));
  const received: Frame[] = [];
  const waiting: ((frame: Frame) => void)[] = [];
  let read = 0;
  socket.on('message', (data) => {
    const frame = JSON.parse(frameText(data)) as Frame;
    received.push(frame);
    waiting.shift()?.(frame);
  });
  const next = (): Promise<Frame> => {
    const index = read;
    read += 1;
    const ready = received[index];
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      waiting.push(resolve);
      socket.once('close', (code) => reject(new Error(`closed with ${code} before frame ${index}`)));
    });
  };
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.once('open', () => {
      socket.send(JSON.stringify(first));
      resolve({
        socket,
        next,
        ask(message) {
          socket.send(JSON.stringify(message));
          return next();
        },
        received,
      });
    });
  });
}

/** A frame's text (ws hands over a Buffer, an ArrayBuffer or fragments). */
function frameText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data).toString('utf8');
}

function closed(socket: WebSocket): Promise<number> {
  return new Promise((resolve) => socket.once('close', (code) => resolve(code)));
}

describe('/v1/images/ws: request/response clients and push clients', () => {
  let host: ImageHost;
  let t: TestServer;
  const sockets: WebSocket[] = [];

  beforeAll(async () => {
    host = await startImageHost();
    host.route('/cover.png', serveBytes(cover, 'image/png'));
    // The memory cache of image bytes is off here: a test counts the pieces read from the store.
    t = await startTestServer({ config: { coverFetch: { allowPrivateAddresses: true }, images: { memoryCacheBytes: 0 } } });
    const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Björk', title: 'Jóga', album: 'Homogenic', coverurl: `${host.url}/cover.png` });
    expect(asObject(asObject(res.json).processed_metadata).coverurl).toBe(`cover/${sha(cover)}`);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.terminate();
    await t.close();
    await host.close();
  });

  it('When a client sends hello at once with a track playing, then it gets only answers, in order, also across a track change', async () => {
    const client = await strictClient(t.url, { type: 'hello', client: 'test' });
    sockets.push(client.socket);
    const welcome = await client.next();
    expect(welcome).toMatchObject({ type: 'welcome', server: 'svc', status: 'ready' });
    expect(typeof welcome.version).toBe('string');

    const image = await client.ask({ type: 'get_images', data_type: 'album', category: 'cover', parameters: { artist: 'Björk', album: 'Homogenic' } });
    expect(image).toMatchObject({ type: 'image_data', data_type: 'album', category: 'cover', artist: 'Björk', album: 'Homogenic', key: sha(cover) });
    expect(Buffer.from(String(image.image_data), 'base64').equals(cover)).toBe(true);

    // The change is pushed to subscribers before this response; it must not reach this client.
    const change = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Björk', title: 'Bachelorette', album: 'Homogenic' });
    expect(change.status).toBe(200);
    expect(await client.ask({ type: 'list_images', data_type: 'album', category: 'cover', parameters: { artist: 'Björk', album: 'Homogenic' } })).toMatchObject(
      {
        type: 'image_list',
        cache_keys: [sha(cover)],
      },
    );
    expect(await client.ask({ type: 'hello' })).toMatchObject({ type: 'welcome' });
    expect(client.received.map((frame) => frame.type)).toEqual(['welcome', 'image_data', 'image_list', 'welcome']);
  });

  it('When a client stays silent for 0.5 s, then it gets the push stream: the current track and its cover', async () => {
    await postJson(`${t.url}/v1/remoteinput`, { artist: 'Björk', title: 'Hunter', album: 'Homogenic', coverurl: `${host.url}/cover.png` });
    const client = await connectClient(t.url, { subscribe: false });
    sockets.push(client.socket);
    const track = await client.waitFor((frame) => frame.type === 'track');
    expect(asObject(track.track).title).toBe('Hunter');
    await client.waitFor((frame) => frame.type === 'image' && frame.key === sha(cover));
  });

  it('When a client says hello with subscribe: true, or sends subscribe later, then it gets the welcome and then the pushes', async () => {
    const helloSubscriber = await strictClient(t.url, { type: 'hello', subscribe: true });
    sockets.push(helloSubscriber.socket);
    expect((await helloSubscriber.next()).type).toBe('welcome');
    expect((await helloSubscriber.next()).type).toBe('track');

    const late = await strictClient(t.url, { type: 'hello' });
    sockets.push(late.socket);
    expect((await late.next()).type).toBe('welcome');
    late.socket.send(JSON.stringify({ type: 'subscribe' }));
    // `subscribe` has no answer of its own: the next frames are the pushes.
    expect(await late.next()).toMatchObject({ type: 'track', album: 'Homogenic' });
    await postJson(`${t.url}/v1/remoteinput`, { artist: 'Moderat', title: 'Reminder' });
    const frames: Frame[] = [];
    for (let frame = await late.next(); ; frame = await late.next()) {
      frames.push(frame);
      if (frame.type === 'track' && frame.artist === 'Moderat') break;
    }
    expect(frames.every((frame) => frame.type === 'track' || frame.type === 'image')).toBe(true);
  });

  it('When a reader stops reading after asking six times for a multi-MB image, then it is not closed, the server reads only a few fragments from the store, and all six answers arrive once it reads again', async () => {
    const big = fakeJpeg(6 * 1024 * 1024, 77);
    const stored = await t.server.imageStore.put(big);
    const dbid = (await t.server.tracks.current())?.dbid as number;
    await t.server.imageStore.link([{ dbid, category: 'fanart', key: stored.key, artistKey: nameKey('Big Artist'), albumKey: '', source: 'test' }]);
    const slice = jest.spyOn(t.server.imageStore, 'slice');

    const client = await strictClient(t.url, { type: 'hello' });
    sockets.push(client.socket);
    const ask = { type: 'get_images', data_type: 'artist', category: 'fanart', parameters: { artist: 'Big Artist' } };
    // Stop reading at once, then ask six times (and six hellos: 13 requests, past the 8 in flight).
    client.socket.pause();
    for (let i = 0; i < 6; i += 1) client.socket.send(JSON.stringify(ask));
    for (let i = 0; i < 6; i += 1) client.socket.send(JSON.stringify({ type: 'hello' }));
    const closeCode = closed(client.socket);

    // Wait until the server has stopped reading pieces of the image (kernel buffers are full).
    let settled = -1;
    while (slice.mock.calls.length !== settled || settled === 0) {
      settled = slice.mock.calls.length;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const bytesRead = slice.mock.calls.reduce((sum, [, , length]) => sum + length, 0);
    // Six whole replies would be 36 MiB read (48 MiB of base64); a stalled reader holds far less.
    expect(bytesRead).toBeLessThan(2 * big.length);
    expect(client.socket.readyState).toBe(WebSocket.OPEN);

    client.socket.resume();
    expect((await client.next()).type).toBe('welcome');
    // Each answer goes out when it is ready (no head-of-line): the welcomes need no store read
    // and may come before the images; every answer arrives, whole.
    const types: unknown[] = [];
    for (let i = 0; i < 12; i += 1) {
      const answer = await client.next();
      types.push(answer.type);
      if (answer.type !== 'image_data') continue;
      expect(answer).toMatchObject({ type: 'image_data', key: stored.key, mime_type: 'image/jpeg' });
      expect(Buffer.from(String(answer.image_data), 'base64').equals(big)).toBe(true);
    }
    expect(types.filter((type) => type === 'image_data')).toHaveLength(6);
    expect(types.filter((type) => type === 'welcome')).toHaveLength(6);
    slice.mockRestore();
    client.socket.close();
    expect(await closeCode).toBe(1005);
  }, 60_000);

  it('When a client has 8 requests unanswered, then the server stops reading its socket until answers drain, and loses nothing', async () => {
    // Its own server, whose heartbeat does not drop this client (it answers no ping) on a busy machine.
    const own = await startTestServer({ ws: { pingIntervalMs: 600_000 } });
    const big = fakeJpeg(3 * 1024 * 1024, 78);
    const stored = await own.server.imageStore.put(big);
    const submitted = await postJson(`${own.url}/v1/remoteinput`, { artist: 'Stalled Artist', title: 'T' });
    const dbid = asObject(submitted.json).dbid as number;
    await own.server.imageStore.link([{ dbid, category: 'fanart', key: stored.key, artistKey: nameKey('Stalled Artist'), albumKey: '', source: 'test' }]);
    const raw = await openRawWs(own.url);
    raw.socket.pause();
    // 8 answers of 4 MiB each: far more than the kernel buffers hold, so they stay in flight.
    for (let i = 0; i < 8; i += 1)
      sendText(raw.socket, JSON.stringify({ type: 'get_images', data_type: 'artist', category: 'fanart', parameters: { artist: 'Stalled Artist' } }));
    // Then 36 MiB of further requests. A server that kept reading would take them all in.
    const helloCount = 600;
    const padded = JSON.stringify({ type: 'hello', padding: 'x'.repeat(60_000) });
    for (let i = 0; i < helloCount; i += 1) sendText(raw.socket, padded);

    // Wait until the bytes still in our own send buffer stop changing: what is left is what the
    // server refused to read.
    let unsent = -1;
    while (raw.socket.writableLength !== unsent) {
      unsent = raw.socket.writableLength;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(unsent).toBeGreaterThan(10 * 1024 * 1024);

    // Reading again: every request is answered, the 8 images first, then every hello.
    let welcomes = 0;
    let tail = '';
    const allAnswered = new Promise<void>((resolve, reject) => {
      void raw.ended.then(() => reject(new Error(`closed after ${welcomes} of ${helloCount} answers`)));
      raw.socket.on('data', (chunk: Buffer) => {
        const text = tail + chunk.toString('latin1');
        welcomes += text.split('"type":"welcome"').length - 1;
        tail = text.slice(-15); // shorter than the marker: no match is counted twice
        if (welcomes === helloCount) resolve();
      });
    });
    raw.socket.resume();
    try {
      await allAnswered;
      expect(raw.socket.destroyed).toBe(false);
    } finally {
      raw.socket.destroy();
      await own.close();
    }
  }, 120_000);
});
