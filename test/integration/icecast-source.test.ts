import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import { chain, encodeFlacOgg, encodeOpus, encodeVorbis, makeTone } from '../helpers/audio-files';
import { basicAuth, connectSource, sourceHead, startIcecastTestServer, waitForTracks, writeAll, type IcecastTestServer } from '../helpers/icecast-source';
import { rawRequest } from '../helpers/raw-http';
import { AUDIO_TOOLS, gateOnPeers } from '../helpers/peers';
import { makeTempDir } from '../helpers/temp-dir';
import { storedCount } from '../helpers/stored-count';
import { until } from '../helpers/eventually';

// The Icecast source listener (docs/dj-software.md) against a real svc: sources streaming Ogg,
// title updates, refusals. Expected answers are Icecast 2.4.4's (xiph/Icecast-Server
// src/connection.c, src/admin.c), checked against a running icecast2.

const PASSWORD = 'hackme';
const WRONG = 'Not-The-Password-9';
const temp = makeTempDir('svc-icecast-');
let svc: IcecastTestServer;
// The tests that stream real Ogg files need sox and the encoders; the protocol tests do not.
const withAudio = gateOnPeers(AUDIO_TOOLS, 'Icecast source listener with real Ogg files');
let vorbis: string;
let opus: string;
let flac: string;

withAudio.beforeAll(async () => {
  vorbis = encodeVorbis(makeTone(temp.dir, 'one', 440), { artist: 'Artist One', title: 'First Title', album: 'Album A' });
  opus = encodeOpus(makeTone(temp.dir, 'two', 660), { artist: 'Artist Two', title: 'Second Title', album: 'Album B' });
  flac = encodeFlacOgg(makeTone(temp.dir, 'three', 880), { artist: 'Artist Three', title: 'Third Title', album: 'Album C' });
});
beforeEach(async () => {
  svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } });
});
afterEach(async () => svc.close());
afterAll(() => temp.cleanup());

const port = () => svc.listener.port;
const tracks = () => svc.ts.server.tracks;
const pick = (fields: Record<string, unknown>) => ({ artist: fields.artist, title: fields.title, album: fields.album });

withAudio.test('PUT with Expect: 100-continue streams chained Vorbis then Opus: each track arrives with its album', async () => {
  const source = await connectSource(port(), sourceHead('PUT', '/chain.ogg', PASSWORD, { Expect: '100-continue' }));
  expect(source.answer()).toBe('HTTP/1.1 100 Continue\r\nContent-Length: 0\r\n\r\nHTTP/1.0 200 OK\r\n\r\n');
  await writeAll(source, chain(vorbis, opus));
  const stored = await waitForTracks(tracks(), 2);
  expect(stored.map(pick)).toEqual([
    { artist: 'Artist One', title: 'First Title', album: 'Album A' },
    { artist: 'Artist Two', title: 'Second Title', album: 'Album B' },
  ]);
  expect(stored[0]?.track).toBe(3);
  const last = await rawRequest(`${svc.ts.url}/v1/last`);
  expect(JSON.parse(last.text)).toMatchObject({ artist: 'Artist Two', title: 'Second Title', album: 'Album B' });
  source.socket.end();
});

withAudio.test('a chunked PUT from an HTTP library carries FLAC in Ogg', async () => {
  const request = http.request({
    host: '127.0.0.1',
    port: port(),
    method: 'PUT',
    path: '/flac.oga',
    agent: false,
    headers: { Authorization: basicAuth(PASSWORD), 'Content-Type': 'audio/ogg', Expect: '100-continue' },
  });
  request.on('error', () => undefined);
  await new Promise((resolve) => request.once('continue', resolve));
  request.write(fs.readFileSync(flac));
  const stored = await waitForTracks(tracks(), 1);
  expect(stored.map(pick)).toEqual([{ artist: 'Artist Three', title: 'Third Title', album: 'Album C' }]);
  request.destroy();
});

test('SOURCE as libshout sends it: the challenge without a password gets 401, then the source is taken', async () => {
  const challenge = await connectSource(port(), sourceHead('SOURCE', '/live.ogg', null, { 'Content-Length': '0', Connection: 'Keep-Alive' }));
  expect(challenge.answer()).toMatch(/^HTTP\/1\.0 401 Authentication Required\r\n/);
  expect(challenge.answer()).toContain('WWW-Authenticate: Basic realm="Icecast2 Server"\r\n');
  const source = await connectSource(port(), sourceHead('SOURCE', '/live.ogg', PASSWORD));
  expect(source.answer()).toBe('HTTP/1.0 200 OK\r\n\r\n');
  // One source per mount: a second is answered as Icecast answers it.
  const second = await connectSource(port(), sourceHead('SOURCE', '/live.ogg', PASSWORD));
  await second.closed;
  expect(second.answer()).toMatch(/^HTTP\/1\.0 403 Forbidden\r\n[\s\S]*\r\n\r\nMountpoint in use$/);
  // Another mount is free, and the first mount is free again once its source has gone.
  const other = await connectSource(port(), sourceHead('SOURCE', '/other.ogg', PASSWORD));
  expect(other.answer()).toBe('HTTP/1.0 200 OK\r\n\r\n');
  source.socket.end();
  await source.closed;
  await until(async () => (await connectSource(port(), sourceHead('SOURCE', '/live.ogg', PASSWORD))).answer().startsWith('HTTP/1.0 200 OK'));
  other.socket.end();
});

withAudio.test('a wrong password gets 401 and nothing is stored; the HTTP API is untouched', async () => {
  const source = await connectSource(port(), sourceHead('PUT', '/live.ogg', WRONG));
  await writeAll(source, chain(vorbis));
  await source.closed;
  expect(source.answer()).toMatch(/^HTTP\/1\.0 401 Authentication Required\r\n/);
  const update = await rawRequest(`http://127.0.0.1:${port()}/admin/metadata?mode=updinfo&mount=/live.ogg&song=A%20-%20B`, {
    headers: { Authorization: basicAuth(WRONG) },
  });
  expect(update.status).toBe(401);
  const shoutcast = await rawRequest(`http://127.0.0.1:${port()}/admin.cgi?mode=updinfo&pass=${WRONG}&song=A%20-%20B`);
  expect(shoutcast.status).toBe(401);
  expect(await storedCount(tracks())).toBe(0);
  expect((await rawRequest(`${svc.ts.url}/v1/status`)).status).toBe(200);
  expect(svc.ts.logs.join('\n')).not.toContain(WRONG);
});

test('updinfo with song, with artist and title, and SHOUTcast admin.cgi each set the current track', async () => {
  const base = `http://127.0.0.1:${port()}`;
  const auth = { Authorization: basicAuth(PASSWORD, 'admin') };
  const song = await rawRequest(`${base}/admin/metadata?mode=updinfo&mount=/live.mp3&song=Daft%20Punk%20-%20One%20More%20Time%20-%20Radio%20Edit`, {
    headers: auth,
  });
  expect(song.status).toBe(200);
  expect(song.headers['content-type']).toBe('text/xml; charset=utf-8');
  expect(song.text).toBe('<?xml version="1.0"?>\n<iceresponse><message>Metadata update successful</message><return>1</return></iceresponse>\n');
  expect(JSON.parse((await rawRequest(`${svc.ts.url}/v1/last`)).text)).toMatchObject({ artist: 'Daft Punk', title: 'One More Time - Radio Edit' });

  const split = await rawRequest(`${base}/admin/metadata?mode=updinfo&mount=/live.mp3&artist=Caf%E9&title=Ol%E9&charset=ISO-8859-1`, { headers: auth });
  expect(split.status).toBe(200);
  expect(JSON.parse((await rawRequest(`${svc.ts.url}/v1/last`)).text)).toMatchObject({ artist: 'Café', title: 'Olé' });

  const shoutcast = await rawRequest(`${base}/admin.cgi?mode=updinfo&pass=${PASSWORD}&song=Moderat%20-%20A%20New%20Error`);
  expect(shoutcast.status).toBe(200);
  expect(shoutcast.text).toContain('Metadata update successful');
  expect(JSON.parse((await rawRequest(`${svc.ts.url}/v1/last`)).text)).toMatchObject({ artist: 'Moderat', title: 'A New Error' });
  expect(await storedCount(tracks())).toBe(3);

  // Icecast's answers to what is not an update; nothing is stored for them.
  const otherMode = await rawRequest(`${base}/admin/metadata?mode=flush&song=x`, { headers: auth });
  expect(otherMode.text).toContain('<message>No such action</message><return>0</return>');
  const nothing = await rawRequest(`${base}/admin/metadata?mode=updinfo&mount=/live.mp3`, { headers: auth });
  expect(nothing.status).toBe(400);
  expect(await storedCount(tracks())).toBe(3);
});

test("what is not a source or an update: libshout's probes get Icecast's answers", async () => {
  const poke = await rawRequest(`http://127.0.0.1:${port()}/admin/!POKE`);
  expect(poke.status).toBe(400);
  expect(poke.text).toContain('Unrecognised command');
  // The TLS probe (OPTIONS * with Upgrade) is closed without an answer, as icecast2 2.4.4 does.
  const options = await connectSource(port(), 'OPTIONS * HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: TLS/1.0, HTTP/1.1\r\n\r\n');
  await options.closed;
  expect(options.answer()).toBe('');
});

withAudio.test('a repeat of the current track in the stream is the same play: no second history row', async () => {
  const source = await connectSource(port(), sourceHead('SOURCE', '/repeat.ogg', PASSWORD));
  await writeAll(source, chain(vorbis, vorbis));
  await until(() => svc.ts.logs.filter((line) => line.includes('/repeat.ogg') && line.includes('stored as dbid')).length === 2);
  expect(await storedCount(tracks())).toBe(1);
  source.socket.end();
});

describe("with a short idle timeout (Icecast's source-timeout, 10 s in production)", () => {
  let quick: IcecastTestServer;
  beforeEach(async () => {
    quick = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } }, 400);
  });
  afterEach(async () => quick.close());

  test('a head trickled a byte at a time is closed at the deadline, however often bytes come', async () => {
    const socket = net.connect(quick.listener.port, '127.0.0.1');
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    let isClosed = false;
    void closed.then(() => (isClosed = true));
    socket.write('SOURCE /slow.ogg HTTP/1.0\r\n');
    // Each byte comes well inside the idle timeout; only the whole-head deadline can end this.
    for (let sent = 0; sent < 200 && !isClosed; sent++) {
      socket.write('X');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(isClosed).toBe(true);
  });

  test('a silent source is closed and its mount is free again', async () => {
    const source = await connectSource(quick.listener.port, sourceHead('SOURCE', '/quiet.ogg', PASSWORD));
    expect(source.answer()).toBe('HTTP/1.0 200 OK\r\n\r\n');
    await source.closed;
    const again = await connectSource(quick.listener.port, sourceHead('SOURCE', '/quiet.ogg', PASSWORD));
    expect(again.answer()).toBe('HTTP/1.0 200 OK\r\n\r\n');
    again.socket.destroy();
  });
});
