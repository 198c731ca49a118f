import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createLogger } from '../../../src/log';
import { until } from '../../helpers/eventually';
import { encodeVorbis, makeTone } from '../../helpers/audio-files';
import { gateOnPeers } from '../../helpers/peers';
import { djSet, makeSong } from '../../helpers/recognition-audio';
import { startHarnessed, testConfig, type HarnessedServer } from '../../helpers/test-server';
import { makeTempDir } from '../../helpers/temp-dir';

// Recognition end to end (docs/recognition.md): a real svc with its Icecast listener and
// recognition on, its library filled over HTTP from sox-made songs, a DJ set with crossfades
// streamed in by a real `curl -T` PUT (MP3, no tags), and a pulled stream served over HTTP after
// a 404. Waits on the stored plays and the status, never on a clock.

const SECRET = 'Recognise-Me-7';
const temp = makeTempDir('svc-recognition-');
const real = gateOnPeers(['sox', 'oggenc', 'vorbiscomment', 'ffmpeg', 'ffprobe', 'fpcalc'], 'recognition on a real listener');
let server: HarnessedServer;
let songs: string[];
let setMp3: string;
const logs: string[] = [];
const children: ChildProcess[] = [];
let pulled: http.Server;
/** The pulled stream answers 404 until the listener's set is recognised, then sends the set once, then 404 again. */
let pullState: 'missing' | 'ready' | 'sent' = 'missing';

real.beforeAll(async () => {
  const music = path.join(temp.dir, 'music');
  fs.mkdirSync(music);
  songs = [21, 22, 23, 24].map((seed, i) => makeSong(music, `song-${i + 1}`, seed, 26, { artist: 'Synth', title: `Song ${i + 1}` }));
  const wav = djSet(songs.slice(0, 3), path.join(temp.dir, 'set.wav'), { from: 2, seconds: 16, fade: 3 });
  setMp3 = path.join(temp.dir, 'set.mp3');
  spawnSyncOk('ffmpeg', ['-v', 'error', '-y', '-i', wav, '-b:a', '128k', setMp3]);
  pulled = http.createServer((_request, response) => {
    if (pullState !== 'ready') {
      response.writeHead(404).end('no such mount');
      return;
    }
    pullState = 'sent';
    response.writeHead(200, { 'Content-Type': 'audio/mpeg' });
    fs.createReadStream(setMp3).pipe(response);
  });
  await new Promise<void>((resolve) => pulled.listen(0, '127.0.0.1', resolve));
  const pulledUrl = `http://127.0.0.1:${(pulled.address() as AddressInfo).port}/studio2.mp3`;
  const config = testConfig(
    {
      secret: SECRET,
      icecastSource: { port: 0 },
      metrics: { enabled: true, requireSecret: false },
      recognition: { enabled: true, streams: [{ url: pulledUrl, channel: 'studio2', vinyl: false }] },
    },
    path.join(temp.dir, 'svc.db'),
  );
  server = await startHarnessed(config, {
    logger: createLogger((line) => logs.push(line)),
    // The set is sent faster than it plays: decoded at once; the 404 is retried at once.
    recognition: { realTime: false, backoffMs: () => 50 },
  });
  const added = await addOverHttp([music, path.join(temp.dir, 'no-such-folder')]);
  expect(added.summary).toMatchObject({ added: 4, tracks: 4 });
  expect(added.problems).toEqual([expect.objectContaining({ error: 'no such file or folder' })]);
});

real.afterAll(async () => {
  if (process.env.SVC_TEST_SHOW_LOGS) process.stderr.write(logs.filter((line) => line.includes('recogni')).join('\n'));
  for (const child of children) if (child.exitCode === null) child.kill();
  await server?.close();
  await new Promise((resolve) => pulled?.close(resolve));
  temp.cleanup();
});

function spawnSyncOk(command: string, args: string[]): void {
  const result = spawnSync(command, args);
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr.toString()}`);
}

async function addOverHttp(paths: string[]): Promise<{ summary: Record<string, unknown>; problems: { path: string; error: string }[] }> {
  const response = await fetch(`${server.url}/v1/library`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-SVC-Client-Auth': SECRET },
    body: JSON.stringify({ paths }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
  const lines = (await response.text())
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    summary: lines.at(-1) ?? {},
    problems: lines.filter((line) => line.type === 'problem').map((line) => line.problem as { path: string; error: string }),
  };
}

/** The stored plays of a channel, oldest first. */
async function playsOn(channel: string): Promise<Record<string, unknown>[]> {
  const page = await server.tracks.history({ limit: 100 });
  return page.records
    .filter((record) => record.play?.channel === channel)
    .sort((a, b) => a.dbid - b.dbid)
    .map((record) => record.metadata);
}

function putSource(file: string, mount: string, contentType: string): ChildProcess {
  const port = server.icecast?.port ?? 0;
  const curl = spawn(
    'curl',
    ['-sS', '-T', file, '-H', `Content-Type: ${contentType}`, '--limit-rate', '200k', '-u', `source:${SECRET}`, `http://127.0.0.1:${port}${mount}`],
    {
      stdio: 'ignore',
    },
  );
  children.push(curl);
  return curl;
}

real.test('the library over HTTP needs the secret, lists what was added, and refuses a bad body', async () => {
  expect((await fetch(`${server.url}/v1/library`)).status).toBe(403);
  const list = (await (await fetch(`${server.url}/v1/library`, { headers: { 'X-SVC-Client-Auth': SECRET } })).json()) as {
    count: number;
    tracks: { tags: { title: string } }[];
  };
  expect(list.count).toBe(4);
  expect(list.tracks.map((track) => track.tags.title)).toEqual(['Song 1', 'Song 2', 'Song 3', 'Song 4']);
  const bad = await fetch(`${server.url}/v1/library`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-SVC-Client-Auth': SECRET },
    body: '{"paths": "x"}',
  });
  expect(bad.status).toBe(400);
  expect((await fetch(`${server.url}/v1/library/999`, { method: 'DELETE', headers: { 'X-SVC-Client-Auth': SECRET } })).status).toBe(404);
});

real.test(
  'a DJ set PUT into the listener: each song is a play, in order, marked recognition with its score; the song not played is not',
  async () => {
    putSource(setMp3, '/live.mp3', 'audio/mpeg');
    await until(async () => (await playsOn('/live.mp3')).length >= 3, 'three recognised plays on /live.mp3', 120_000);
    const plays = await playsOn('/live.mp3');
    expect(plays.map((fields) => fields.title)).toEqual(['Song 1', 'Song 2', 'Song 3']);
    for (const fields of plays) {
      expect(fields).toMatchObject({ artist: 'Synth', recognition: 'fingerprint', recognition_stream: 'icecast:/live.mp3' });
      expect(Number(fields.recognition_score)).toBeGreaterThan(0.7);
    }
    const status = (await (await fetch(`${server.url}/v1/status`)).json()) as {
      recognition: { library: number; streams: { name: string; lastMatch?: { score: number } }[] };
    };
    expect(status.recognition.library).toBe(4);
    const live = status.recognition.streams.find((stream) => stream.name === 'icecast:/live.mp3');
    expect(live?.lastMatch?.score).toBeGreaterThan(0.7);
    // GET /metrics counts the recognised plays per stream (docs/running.md "Metrics").
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^svc_recognition_plays_total\{stream="icecast:\/live\.mp3"\} 3$/m);
    expect(Number(/^svc_recognition_matches_total\{stream="icecast:\/live\.mp3"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(6);
    // The source hangs up at the end of the set: the stream's status says so, not a decoder's error.
    const liveStatus = async () =>
      (
        (await (await fetch(`${server.url}/v1/status`)).json()) as { recognition: { streams: { name: string; listening: boolean; problem?: string }[] } }
      ).recognition.streams.find((stream) => stream.name === 'icecast:/live.mp3');
    await until(async () => (await liveStatus())?.listening === false, 'the source of /live.mp3 gone', 60_000);
    expect((await liveStatus())?.problem).toBe('the source disconnected');
  },
  150_000,
);

real.test(
  'a pulled stream that first answers 404 is connected to again, and its set is recognised on its channel',
  async () => {
    // The set is sent only now, after the listener's: the same songs at once on two channels would
    // be one play (the same artist and title as the current track join it, docs/title-first.md).
    pullState = 'ready';
    await until(async () => (await playsOn('studio2')).length >= 3, 'three recognised plays on studio2', 120_000);
    expect((await playsOn('studio2')).map((fields) => fields.title)).toEqual(['Song 1', 'Song 2', 'Song 3']);
    expect(logs.some((line) => line.includes('HTTP 404'))).toBe(true);
  },
  150_000,
);

real.test(
  "an Ogg source's own tags win: recognition submits nothing on that channel",
  async () => {
    const tagged = encodeVorbis(makeTone(temp.dir, 'tagged', 440, 1), { artist: 'Tagged', title: 'From The Source', album: 'A' });
    // The tags first, then a song the library knows, all on one mount.
    const song = path.join(temp.dir, 'song-1-copy.ogg');
    fs.copyFileSync(songs[0], song);
    const both = path.join(temp.dir, 'tagged-then-song.ogg');
    fs.writeFileSync(both, Buffer.concat([fs.readFileSync(tagged), fs.readFileSync(song)]));
    putSource(both, '/tagged.ogg', 'audio/ogg');
    await until(() => logs.some((line) => line.includes("the source's own title on /tagged.ogg stands")), 'recognition heard the song and held back', 120_000);
    const plays = await playsOn('/tagged.ogg');
    expect(plays.map((fields) => fields.recognition)).not.toContain('fingerprint');
    expect(plays[0]).toMatchObject({ artist: 'Tagged', title: 'From The Source' });
  },
  150_000,
);
