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
import { makeTempDir } from '../../helpers/temp-dir';
import { startHarnessed, testConfig, type HarnessedServer } from '../../helpers/test-server';

// Online lookups end to end (docs/recognition.md "Online lookups"): a real svc pulls a DJ set
// over HTTP; its first song is in the library, the second only in the catalogue of a fake
// ACRCloud (test/fakes/recognition-services.ts), the third in neither. The library's song is a
// fingerprint play and costs no lookup; the second is titled by ACRCloud with its score, looked
// up once; the third is looked up once, found nowhere and left untitled, with a log line. The
// set is sent in two parts, the second once the ACRCloud play is stored: markers, not clocks.

const SECRET = 'Online-Lookups-3';
const KEYS = { acrcloud: { accessKey: 'acr-key-1', accessSecret: 'acr-secret-1', qps: 5 }, audd: { apiToken: 'audd-1' }, acoustid: { client: 'ac-1' } };
const temp = makeTempDir('svc-online-');
const real = gateOnPeers(['sox', 'oggenc', 'vorbiscomment', 'ffmpeg', 'ffprobe', 'fpcalc'], 'online recognition lookups');
let server: HarnessedServer;
let fake: RecognitionFake;
let pulled: http.Server;
const logs: string[] = [];
let firstPart: Buffer;
let secondPart: Buffer;
let sendRest: (() => void) | null = null;
let ready = false;
const SEND_CHUNK_BYTES = 32 * 1024;
const SEND_EVERY_MS = 200;

real.beforeAll(async () => {
  const music = path.join(temp.dir, 'music');
  const outside = path.join(temp.dir, 'outside');
  fs.mkdirSync(music);
  fs.mkdirSync(outside);
  const known = makeSong(music, 'known', 31, 40, { artist: 'Synth', title: 'In The Library' });
  const elsewhere = makeSong(outside, 'elsewhere', 32, 40, { artist: 'Far Away', title: 'Only Online' });
  const nowhere = makeSong(outside, 'nowhere', 33, 40, { artist: 'Nobody', title: 'Unknown' });
  const wav = djSet([known, elsewhere, nowhere], path.join(temp.dir, 'set.wav'), { from: 2, seconds: 36, fade: 3 });
  const mp3 = path.join(temp.dir, 'set.mp3');
  const encoded = spawnSync('ffmpeg', ['-v', 'error', '-y', '-i', wav, '-b:a', '128k', mp3]);
  if (encoded.status !== 0) throw new Error(encoded.stderr.toString());
  // Constant bit rate: bytes are proportional to time. The first part ends as the third song fades in (66 s of 102).
  const bytes = fs.readFileSync(mp3);
  const cut = Math.round((bytes.length * 66) / 102);
  firstPart = bytes.subarray(0, cut);
  secondPart = bytes.subarray(cut);
  fake = await startRecognitionFake(
    [{ file: elsewhere, artist: 'Far Away', title: 'Only Online', album: 'Out There', isrc: 'XXA012600001', durationSeconds: 38 }],
    KEYS,
    (file) => decodeFile(DEFAULT_TOOLS, file),
  );
  let served = false;
  pulled = http.createServer((_request, response) => {
    // 404 until the library is filled, and after the one time the set is sent.
    if (served || !ready) {
      response.writeHead(404).end('gone');
      return;
    }
    served = true;
    response.writeHead(200, { 'Content-Type': 'audio/mpeg' });
    // Sent at about 10 times the speed it plays (16 KB/s at 128 kbit/s): well inside what svc's decoder
    // takes in on a loaded machine; much faster, svc drops what its decoder has no room for (src/recognition/audio-stream.ts).
    const send = (bytes: Buffer, then: () => void) => {
      if (bytes.length === 0) return then();
      response.write(bytes.subarray(0, SEND_CHUNK_BYTES));
      setTimeout(() => send(bytes.subarray(SEND_CHUNK_BYTES), then), SEND_EVERY_MS);
    };
    send(firstPart, () => undefined);
    sendRest = () => send(secondPart, () => response.end());
  });
  await new Promise<void>((resolve) => pulled.listen(0, '127.0.0.1', resolve));
  const config = testConfig(
    {
      secret: SECRET,
      recognition: {
        enabled: true,
        streams: [{ url: `http://127.0.0.1:${(pulled.address() as AddressInfo).port}/relay.mp3`, channel: 'relay', vinyl: false }],
        online: {
          service: 'acrcloud',
          apiKey: KEYS.acrcloud.accessKey,
          apiSecret: KEYS.acrcloud.accessSecret,
          baseUrl: fake.url,
          minIntervalSeconds: 0,
          sampleSeconds: 8,
        },
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
  ready = true;
});

real.afterAll(async () => {
  if (process.env.SVC_TEST_SHOW_LOGS) process.stderr.write(logs.filter((line) => line.includes('recogni')).join('\n'));
  sendRest?.();
  await server?.close();
  await new Promise((resolve) => pulled?.close(resolve));
  await fake?.close();
  temp.cleanup();
});

async function playsOn(channel: string): Promise<Record<string, unknown>[]> {
  const page = await server.tracks.history({ limit: 100 });
  return page.records
    .filter((record) => record.play?.channel === channel)
    .sort((a, b) => a.dbid - b.dbid)
    .map((record) => record.metadata);
}

real.test(
  'a track outside the library is titled by the online service once per play; the library wins; one found nowhere stays untitled',
  async () => {
    await until(async () => (await playsOn('relay')).length >= 2, 'the library play and the online play on relay', 40_000);
    sendRest?.();
    await until(() => logs.some((line) => line.includes('acrcloud knows no track in the sample')), 'the third song looked up and not found', 120_000);
    const plays = await playsOn('relay');
    expect(plays.map((fields) => fields.title)).toEqual(['In The Library', 'Only Online']);
    expect(plays[0]).toMatchObject({ recognition: 'fingerprint' });
    expect(plays[1]).toMatchObject({
      artist: 'Far Away',
      album: 'Out There',
      isrc: 'XXA012600001',
      recognition: 'acrcloud',
      recognition_stream: expect.stringContaining('/relay.mp3'),
    });
    expect(Number(plays[1]?.recognition_score)).toBeGreaterThan(0.7);
    // One request per play outside the library, none for the library's song.
    expect(fake.answers).toEqual([
      { service: 'acrcloud', code: 0, title: 'Only Online' },
      { service: 'acrcloud', code: 1001 },
    ]);
  },
  150_000,
);
