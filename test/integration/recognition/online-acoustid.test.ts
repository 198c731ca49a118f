import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createLogger } from '../../../src/log';
import { decodeFile, DEFAULT_TOOLS } from '../../../src/recognition/audio-tools';
import { startRecognitionFake, type RecognitionFake } from '../../fakes/recognition-services';
import { until } from '../../helpers/eventually';
import { gateOnPeers } from '../../helpers/peers';
import { djSet, makeSong } from '../../helpers/recognition-audio';
import { runCli } from '../../helpers/run-cli';
import { makeTempDir } from '../../helpers/temp-dir';
import { startHarnessed, testConfig, type HarnessedServer } from '../../helpers/test-server';

// AcoustID as the online service, end to end (docs/recognition.md "Online lookups"): a real svc
// pulls two streams over HTTP; the AcoustID fake (test/fakes/recognition-services.ts) has the
// first song of each registered, the library does not. AcoustID matches whole tracks (its length
// window, test/fakes/acoustid-catalogue.ts), so the sample is 32 s of a 38 s song.
// - relay-a: the song, then a library song. The first is titled through AcoustID with its score
//   (read back with `svc history --json` and `svc history`), the second by the library.
// - relay-b: the same song while AcoustID answers its rate-limit error: one log line, no title,
//   svc still answers.
// Each stream's first part (the AcoustID song and the start of the next) is sent, the rest once
// the lookup has answered: markers, not clocks.

const SECRET = 'Online-AcoustID-7';
const KEYS = { acrcloud: { accessKey: 'acr', accessSecret: 'acr-secret', qps: 5 }, audd: { apiToken: 'audd' }, acoustid: { client: 'acoustid-app-1' } };
const RECORDING_ID = '0f3c2b4e-9c6a-4f0e-8d2a-1b5e6c7d8e9f';
const SONG_SECONDS = 38;
/** The sample AcoustID is sent: within its 7 s length window of the song's 38 s. */
const SAMPLE_SECONDS = 32;
/** Seconds of the next song in each stream's first part: svc's decoder holds the last seconds it was sent until more arrives. */
const INTO_NEXT_SECONDS = 10;
const temp = makeTempDir('svc-online-acoustid-');
const real = gateOnPeers(['sox', 'oggenc', 'vorbiscomment', 'ffmpeg', 'ffprobe', 'fpcalc'], 'online recognition through AcoustID');
let server: HarnessedServer;
let fake: RecognitionFake;
let pulled: http.Server;
const logs: string[] = [];
const SEND_CHUNK_BYTES = 16 * 1024;
const SEND_EVERY_MS = 250;

interface Relay {
  first: Buffer;
  rest: Buffer;
  ready: boolean;
  served: boolean;
  sendRest: (() => void) | null;
}
const relays = new Map<string, Relay>();

/** The set as MP3 at a constant bit rate, cut some seconds into the second song. */
function encodedSet(songs: string[], name: string): { first: Buffer; rest: Buffer } {
  const wav = djSet(songs, path.join(temp.dir, `${name}.wav`), { from: 0, seconds: SONG_SECONDS, fade: 0 });
  const mp3 = path.join(temp.dir, `${name}.mp3`);
  const encoded = spawnSync('ffmpeg', ['-v', 'error', '-y', '-i', wav, '-b:a', '128k', mp3]);
  if (encoded.status !== 0) throw new Error(encoded.stderr.toString());
  const bytes = fs.readFileSync(mp3);
  const cut = Math.round((bytes.length * (SONG_SECONDS + INTO_NEXT_SECONDS)) / (SONG_SECONDS * songs.length));
  return { first: bytes.subarray(0, cut), rest: bytes.subarray(cut) };
}

real.beforeAll(async () => {
  const music = path.join(temp.dir, 'music');
  const outside = path.join(temp.dir, 'outside');
  fs.mkdirSync(music);
  fs.mkdirSync(outside);
  const known = makeSong(music, 'known', 61, SONG_SECONDS + 4, { artist: 'Synth', title: 'In The Library' });
  const registered = makeSong(outside, 'registered', 62, SONG_SECONDS, { artist: 'Acoustic Id', title: 'Only In AcoustID' });
  fake = await startRecognitionFake(
    [{ file: registered, artist: 'Acoustic Id', title: 'Only In AcoustID', durationSeconds: SONG_SECONDS, musicbrainzRecordingId: RECORDING_ID }],
    KEYS,
    (file) => decodeFile(DEFAULT_TOOLS, file),
  );
  relays.set('/a.mp3', { ...encodedSet([registered, known], 'a'), ready: false, served: false, sendRest: null });
  relays.set('/b.mp3', { ...encodedSet([registered, known], 'b'), ready: false, served: false, sendRest: null });
  pulled = http.createServer((request, response) => {
    const relay = relays.get(request.url ?? '');
    // 404 until the test lets the relay play, and after the one time it is sent.
    if (!relay || relay.served || !relay.ready) {
      response.writeHead(404).end('gone');
      return;
    }
    relay.served = true;
    response.writeHead(200, { 'Content-Type': 'audio/mpeg' });
    // About 4 times the speed it plays (16 KB/s at 128 kbit/s): audio svc's decoder has no room
    // for is dropped (src/recognition/audio-stream.ts), and a gap moves the sample further into the
    // song than AcoustID aligns (80 items); 10 times dropped some on a loaded machine.
    const send = (bytes: Buffer, then: () => void) => {
      if (bytes.length === 0) return then();
      response.write(bytes.subarray(0, SEND_CHUNK_BYTES));
      setTimeout(() => send(bytes.subarray(SEND_CHUNK_BYTES), then), SEND_EVERY_MS);
    };
    send(relay.first, () => undefined);
    relay.sendRest = () => send(relay.rest, () => response.end());
  });
  await new Promise<void>((resolve) => pulled.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(pulled.address() as AddressInfo).port}`;
  const config = testConfig(
    {
      secret: SECRET,
      recognition: {
        enabled: true,
        streams: [
          { url: `${base}/a.mp3`, channel: 'relay-a', vinyl: false },
          { url: `${base}/b.mp3`, channel: 'relay-b', vinyl: false },
        ],
        online: { service: 'acoustid', apiKey: KEYS.acoustid.client, baseUrl: `${fake.url}/v2`, sampleSeconds: SAMPLE_SECONDS },
      },
    },
    path.join(temp.dir, 'svc.db'),
  );
  server = await startHarnessed(config, {
    logger: createLogger((line) => logs.push(line)),
    recognition: { realTime: false, backoffMs: () => 200, idleMs: 600_000 },
  });
  const response = await fetch(`${server.url}/v1/library`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-SVC-Client-Auth': SECRET },
    body: JSON.stringify({ paths: [music] }),
  });
  expect(response.status).toBe(200);
  await response.text();
});

real.afterAll(async () => {
  if (process.env.SVC_TEST_SHOW_LOGS) process.stderr.write(logs.filter((line) => line.includes('recogni')).join('\n'));
  for (const relay of relays.values()) relay.sendRest?.();
  await server?.close();
  await new Promise((resolve) => pulled?.close(resolve));
  await fake?.close();
  temp.cleanup();
});

/** The channel's plays, oldest first, as `svc history --json` prints them. */
async function history(channel: string): Promise<Record<string, unknown>[]> {
  const result = await runCli(['history', '--channel', channel, '--json'], { env: { SVC_URL: server.url, SVC_SECRET: SECRET } });
  expect(result.code).toBe(0);
  return result.stdout
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const acoustIdAnswers = () => fake.answers.filter((answer) => answer.service === 'acoustid');

real.test(
  'a song outside the library that AcoustID knows is titled through AcoustID with its score; the library song after it by the library',
  async () => {
    const relay = relays.get('/a.mp3');
    if (!relay) throw new Error('no relay a');
    relay.ready = true;
    await until(async () => (await history('relay-a')).length >= 1, 'the AcoustID play on relay-a', 60_000);
    relay.sendRest?.();
    await until(async () => (await history('relay-a')).length >= 2, 'the library play after it', 60_000);
    const plays = await history('relay-a');
    expect(plays.map((fields) => fields.title)).toEqual(['Only In AcoustID', 'In The Library']);
    expect(plays[0]).toMatchObject({
      artist: 'Acoustic Id',
      musicbrainzrecordingid: RECORDING_ID,
      recognition: 'acoustid',
      recognition_stream: expect.stringContaining('/a.mp3'),
    });
    expect(Number(plays[0]?.recognition_score)).toBeGreaterThan(0.8);
    expect(plays[1]).toMatchObject({ recognition: 'fingerprint' });
    expect(acoustIdAnswers()).toEqual([{ service: 'acoustid', code: 0, title: 'Only In AcoustID' }]);
    const text = await runCli(['history', '--channel', 'relay-a'], { env: { SVC_URL: server.url, SVC_SECRET: SECRET } });
    expect(text.stdout).toMatch(/Only In AcoustID.*\[recognised 0\.\d+\]/);
    // Nothing the decoder had no room for: a gap would have moved the sample (see the sender above).
    const status = (await (await fetch(`${server.url}/v1/status`)).json()) as { recognition: { streams: { name: string; droppedBytes: number }[] } };
    expect(status.recognition.streams.find((stream) => stream.name.endsWith('/a.mp3'))?.droppedBytes).toBe(0);
  },
  150_000,
);

real.test(
  "AcoustID's rate-limit answer: one log line, no title, svc goes on",
  async () => {
    const relay = relays.get('/b.mp3');
    if (!relay) throw new Error('no relay b');
    fake.failWith('limit');
    relay.ready = true;
    await until(() => logs.some((line) => line.includes('the acoustid lookup failed')), 'the lookup on relay-b refused', 60_000);
    relay.sendRest?.();
    // The library titles the song after it: the stream was listened to all along.
    await until(async () => (await history('relay-b')).length >= 1, 'the library play on relay-b', 60_000);
    expect((await history('relay-b')).map((fields) => fields.title)).toEqual(['In The Library']);
    const failures = logs.filter((line) => line.includes('the acoustid lookup failed'));
    expect(failures).toEqual([expect.stringContaining('no title (')]);
    expect(failures[0]).toContain('429');
    expect(acoustIdAnswers().map((answer) => answer.code)).toEqual([0, 14]);
    const status = await fetch(`${server.url}/v1/status`, { headers: { 'X-SVC-Client-Auth': SECRET } });
    expect(status.status).toBe(200);
    await status.text();
    fake.failWith(null);
  },
  150_000,
);
