import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { encodeVorbis, makeTone } from '../helpers/audio-files';
import { request } from '../helpers/http';
import { connectSource, sourceHead, writeAll } from '../helpers/icecast-source';
import { until } from '../helpers/eventually';
import { VORBIS_COMMENT_PREFIX, VORBIS_ID_PACKET, oggPage } from '../helpers/ogg-pages';
import { runCli } from '../helpers/run-cli';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process';
import { gateOnPeers } from '../helpers/peers';
import { makeTempDir } from '../helpers/temp-dir';

// `svc serve --icecast-port` as a DJ runs it, fed by the real ezstream (Debian; libshout, the
// library Mixxx and butt use too), then by clients that send what no encoder sends
// (docs/dj-software.md).

const PASSWORD = 'hackme';
const ICECAST_LINE = /^ {2}icecast +http:\/\/127\.0\.0\.1:(\d+) +DJ software's Icecast settings: any mount, any user, password: the shared secret$/m;
const temp = makeTempDir('svc-ezstream-');
// Only the ezstream test needs the outside programs; the hand-made clients run anywhere.
const withEzstream = gateOnPeers(['ezstream', 'sox', 'oggenc', 'vorbiscomment'], 'svc serve fed by the real ezstream');
let serve: ServeProcess;
let icecastPort: number;

beforeAll(async () => {
  serve = await startServeProcess(['--port', '0', '--icecast-port', '0', '--secret', PASSWORD, '--db', path.join(temp.dir, 'svc.db'), '--offline']);
  await until(() => ICECAST_LINE.test(serve.stdout()));
  icecastPort = Number(ICECAST_LINE.exec(serve.stdout())?.[1]);
});
afterAll(async () => {
  serve.child.kill('SIGTERM');
  await serve.exited;
  temp.cleanup();
});

/** An ezstream 1.0 configuration as docs/dj-software.md shows it. */
function ezstreamConfig(port: number, playlist: string): string {
  return `<ezstream>
  <servers><server>
    <hostname>127.0.0.1</hostname><port>${port}</port>
    <password>${PASSWORD}</password>
  </server></servers>
  <streams><stream><mountpoint>/live.ogg</mountpoint><format>Ogg</format></stream></streams>
  <intakes><intake><type>playlist</type><filename>${playlist}</filename><stream_once>yes</stream_once></intake></intakes>
</ezstream>
`;
}

function runEzstream(configFile: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile('ezstream', ['-v', '-c', configFile], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

/** The process's peak resident set (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const line = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(line?.[1]) * 1024;
}

test('start-up names the listener among the URLs it prints', () => {
  expect(serve.stdout()).toMatch(/^svc listening on http:\/\/127\.0\.0\.1:\d+\n/);
  expect(serve.stdout()).toMatch(ICECAST_LINE);
  expect(icecastPort).toBeGreaterThan(0);
});

withEzstream.test('ezstream streams a two-file Ogg Vorbis playlist: both tracks arrive, in order', async () => {
  const one = encodeVorbis(makeTone(temp.dir, 'one', 440, 2), { artist: 'Artist One', title: 'First Title', album: 'Album A' });
  const two = encodeVorbis(makeTone(temp.dir, 'two', 660, 2), { artist: 'Artist Two', title: 'Second Title', album: 'Album B' });
  const playlist = path.join(temp.dir, 'playlist.txt');
  fs.writeFileSync(playlist, `${one}\n${two}\n`);
  const configFile = path.join(temp.dir, 'ezstream.xml');
  // ezstream refuses a configuration file others can read (it holds the password).
  fs.writeFileSync(configFile, ezstreamConfig(icecastPort, playlist), { mode: 0o600 });

  const run = await runEzstream(configFile);
  expect(run.output).toContain(`connected: http://127.0.0.1:${icecastPort}/live.ogg`);
  expect(run.code).toBe(0);
  await until(async () => ((await request(`${serve.url}/v1/history`)).json as { tracks: unknown[] }).tracks.length >= 2);
  const history = (await request(`${serve.url}/v1/history`)).json as { tracks: Record<string, unknown>[] };
  expect(history.tracks.map((track) => [track.artist, track.title, track.album])).toEqual([
    ['Artist Two', 'Second Title', 'Album B'],
    ['Artist One', 'First Title', 'Album A'],
  ]);
  expect(serve.stderr()).toMatch(/icecast source \/live\.ogg from 127\.0\.0\.1: track "Artist One - First Title" stored as dbid \d+/);
});

// Issue 52: a DJ whose ezstream has the wrong password must see why in svc's log by the time
// ezstream gives up, not a minute later.
withEzstream.test('ezstream with a wrong password: it says "Login failed", and svc has logged the failed authentication by then', async () => {
  const one = encodeVorbis(makeTone(temp.dir, 'wrong', 440, 1), { artist: 'Never', title: 'Stored', album: 'Refused' });
  const playlist = path.join(temp.dir, 'wrong-playlist.txt');
  fs.writeFileSync(playlist, `${one}\n`);
  const configFile = path.join(temp.dir, 'ezstream-wrong.xml');
  fs.writeFileSync(configFile, ezstreamConfig(icecastPort, playlist).replace(`<password>${PASSWORD}</password>`, '<password>not-the-secret</password>'), {
    mode: 0o600,
  });
  const before = serve.stderr().length;
  const run = await runEzstream(configFile);
  expect(run.output).toContain('Login failed');
  expect(run.code).not.toBe(0);
  // Its one attempt reached svc before ezstream gave up; the line is written as it is refused.
  await until(
    () => /warn failed authentication on the Icecast port \(\w+\) from 127\.0\.0\.1: \d+ in a row/.test(serve.stderr().slice(before)),
    'the failed authentication line',
  );
});

test('50 MB of random bytes and an endless comment header are each closed with one log line; memory stays bounded', async () => {
  const peakBefore = peakRss(serve.child.pid ?? 0);
  const noise = await connectSource(icecastPort, sourceHead('PUT', '/noise.ogg', PASSWORD));
  expect(noise.answer()).toBe('HTTP/1.0 200 OK\r\n\r\n');
  const { sent } = await writeAll(noise, crypto.randomBytes(50 * 1024 * 1024));
  await noise.closed;
  expect(sent).toBeLessThan(50 * 1024 * 1024);

  const endless = await connectSource(icecastPort, sourceHead('SOURCE', '/endless.ogg', PASSWORD));
  const start = Buffer.alloc(255, 0x41);
  VORBIS_COMMENT_PREFIX.copy(start);
  start.writeUInt32LE(0xfffffff0, VORBIS_COMMENT_PREFIX.length); // a vendor string of 4 GB
  const pages = [
    oggPage({ serial: 5, sequence: 0, headerType: 0x02, segments: [VORBIS_ID_PACKET] }),
    oggPage({ serial: 5, sequence: 1, headerType: 0, segments: [start], lastContinues: true }),
  ];
  const filler = Buffer.alloc(255 * 255, 0x41);
  for (let sequence = 2; sequence < 2 + 1000; sequence++)
    pages.push(oggPage({ serial: 5, sequence, headerType: 0x01, segments: [filler], lastContinues: true }));
  const endlessBody = Buffer.concat(pages); // 65 MB of one comment header
  const endlessRun = await writeAll(endless, endlessBody);
  await endless.closed;
  expect(endlessRun.sent).toBeLessThan(endlessBody.length);

  await until(() => (serve.stderr().match(/closed: not a readable Ogg stream/g) ?? []).length >= 2);
  const lines = serve.stderr().split('\n');
  expect(lines.filter((line) => line.includes('/noise.ogg'))).toEqual([
    expect.stringContaining('connected'),
    expect.stringMatching(/closed: not a readable Ogg stream \(no Ogg page in \d+ bytes\)/),
  ]);
  expect(lines.filter((line) => line.includes('/endless.ogg') && line.includes('closed'))).toEqual([
    expect.stringContaining('comment header over 16777216 bytes'),
  ]);
  // Neither body was held: the peak grew by far less than either.
  expect(peakRss(serve.child.pid ?? 0) - peakBefore).toBeLessThan(40 * 1024 * 1024);
  expect((await request(`${serve.url}/v1/status`)).status).toBe(200);
});

test('icecastSource.password, when set, is the password sources and updates give (not the shared secret)', async () => {
  const configFile = path.join(temp.dir, 'own-password.json');
  fs.writeFileSync(configFile, JSON.stringify({ icecastSource: { port: 0, password: 'dj-only' } }));
  const own = await startServeProcess(['--port', '0', '--secret', PASSWORD, '--config', configFile, '--db', path.join(temp.dir, 'own.db'), '--offline']);
  try {
    const line = /^ {2}icecast +http:\/\/127\.0\.0\.1:(\d+) +DJ software's Icecast settings: any mount, any user, password: icecastSource\.password$/m;
    await until(() => line.test(own.stdout()));
    const base = `http://127.0.0.1:${line.exec(own.stdout())?.[1]}`;
    const update = (password: string) => request(`${base}/admin.cgi?mode=updinfo&pass=${password}&song=Own%20-%20Password`);
    expect((await update(PASSWORD)).status).toBe(401);
    expect((await update('dj-only')).status).toBe(200);
    expect(((await request(`${own.url}/v1/last`)).json as Record<string, unknown>).artist).toBe('Own');
  } finally {
    own.child.kill('SIGTERM');
    await own.exited;
  }
});

// Round three, N3 (docs/security.md "Icecast sources"): without a password the port took tracks
// from anyone, any web page included. Now start-up stops and says what to set.
test('without a secret or icecastSource.password, svc serve --icecast-port stops at start-up and says what to set', async () => {
  const result = await runCli(['serve', '--port', '0', '--icecast-port', '0', '--db', ':memory:', '--offline']);
  expect(result.code).not.toBe(0);
  expect(result.stderr).toContain('icecastSource.port needs a password: set icecastSource.password or a secret');
  expect(result.stdout).not.toContain('svc listening on');
});
