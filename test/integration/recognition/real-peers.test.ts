import { execFile, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createLogger } from '../../../src/log';
import { until } from '../../helpers/eventually';
import { startIcecast, type IcecastServer } from '../../helpers/icecast';
import { gateOnPeers } from '../../helpers/peers';
import { djSet } from '../../helpers/recognition-audio';
import { startHarnessed, testConfig, type HarnessedServer } from '../../helpers/test-server';
import { makeTempDir } from '../../helpers/temp-dir';

// Recognition against the real peers (docs/recognition.md): Debian's hyperrogue-music made into
// two DJ sets with crossfades by sox, each ending in tracks the library does not hold. The real
// `ezstream` streams one (Ogg Vorbis, no tags) into svc's own Icecast listener; a second ezstream
// streams the other, sped up 5 % as a turntable off pitch (MP3), to a real `icecast2`, which svc
// pulls as a listener (`recognition.streams`, marked vinyl). Both play in real time, at once, on
// their own channels. Waits on stored plays, never on a clock.

const SECRET = 'Turntables-And-Tapes-9';
const MUSIC = '/usr/share/hyperrogue/music';
const LIVE = ['hr3-desert.ogg', 'hr3-jungle.ogg', 'hr3-mirror.ogg'];
const DECK = ['hr3-icyland.ogg', 'hr3-motion.ogg', 'hr-domina-mountain.ogg'];
/** Never added: the sets end in them, so the last title is cleared while the stream still plays. */
const HELD_OUT = ['hr3-hell.ogg', 'hr-domina-hunting.ogg', 'hr-savino-ivory.ogg', 'hr3-rlyeh.ogg'];
const SPEED = 1.05;

const real = gateOnPeers(['sox', 'oggenc', 'ffmpeg', 'ffprobe', 'fpcalc', 'ezstream', 'icecast2'], 'recognition fed by a real ezstream and a real icecast2');
const haveMusic = fs.existsSync(path.join(MUSIC, LIVE[0] ?? ''));
const withMusic = haveMusic ? real : { ...real, test: test.skip, beforeAll: () => undefined, afterAll: () => undefined };
if (!haveMusic) process.stderr.write(`skipped: ${MUSIC} is missing (Debian package hyperrogue-music)\n`);

const temp = makeTempDir('svc-recognition-peers-');
const logs: string[] = [];
let server: HarnessedServer;
let icecast: IcecastServer;
/** Library path -> title, as svc read the tags. */
const titles = new Map<string, string>();
const children: ChildProcess[] = [];

withMusic.beforeAll(async () => {
  icecast = await startIcecast();
  const config = testConfig(
    {
      secret: SECRET,
      icecastSource: { port: 0 },
      recognition: { enabled: true, streams: [{ url: `${icecast.url}/turntable.mp3`, channel: 'turntables', vinyl: true }] },
    },
    path.join(temp.dir, 'svc.db'),
  );
  // The pulled mount answers 404 until its ezstream connects: tried again every 200 ms.
  server = await startHarnessed(config, { logger: createLogger((line) => logs.push(line)), recognition: { backoffMs: () => 200 } });
  const response = await fetch(`${server.url}/v1/library`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-SVC-Client-Auth': SECRET },
    body: JSON.stringify({ paths: [...LIVE, ...DECK].map((name) => path.join(MUSIC, name)) }),
  });
  expect(response.status).toBe(200);
  expect(JSON.parse((await response.text()).trim().split('\n').at(-1) ?? '{}')).toMatchObject({ added: 6, tracks: 6 });
  const list = (await (await fetch(`${server.url}/v1/library`, { headers: { 'X-SVC-Client-Auth': SECRET } })).json()) as {
    tracks: { path: string; tags: { title: string } }[];
  };
  for (const track of list.tracks) titles.set(path.basename(track.path), track.tags.title);
}, 120_000);

withMusic.afterAll(async () => {
  if (process.env.SVC_TEST_SHOW_LOGS) process.stderr.write(logs.filter((line) => line.includes('recogni')).join('\n'));
  for (const child of children) if (child.exitCode === null) child.kill();
  await server?.close();
  await icecast?.close();
  temp.cleanup();
});

/** A set of the tracks, 18 s of each from 10 s in, crossfaded over 3 s, as one WAV. */
function makeSet(names: readonly string[], out: string): string {
  return djSet(
    names.map((name) => path.join(MUSIC, name)),
    out,
    { from: 10, seconds: 18, fade: 3 },
  );
}

/** ezstream 1.0 streaming one file once (docs/dj-software.md shows the same configuration). */
function runEzstream(
  name: string,
  port: number,
  password: string,
  mount: string,
  format: 'Ogg' | 'MP3',
  file: string,
): { child: ChildProcess; exited: Promise<string> } {
  const playlist = path.join(temp.dir, `${name}.txt`);
  fs.writeFileSync(playlist, `${file}\n`);
  const configFile = path.join(temp.dir, `${name}.xml`);
  // ezstream refuses a configuration file others can read (it holds the password).
  fs.writeFileSync(
    configFile,
    `<ezstream>
  <servers><server><hostname>127.0.0.1</hostname><port>${port}</port><password>${password}</password></server></servers>
  <streams><stream><mountpoint>${mount}</mountpoint><format>${format}</format></stream></streams>
  <intakes><intake><type>playlist</type><filename>${playlist}</filename><stream_once>yes</stream_once></intake></intakes>
</ezstream>
`,
    { mode: 0o600 },
  );
  let done: (output: string) => void = () => undefined;
  const exited = new Promise<string>((resolve) => (done = resolve));
  const child = execFile('ezstream', ['-v', '-c', configFile], { timeout: 300_000 }, (_error, stdout, stderr) => done(stdout + stderr));
  children.push(child);
  return { child, exited };
}

interface Play {
  title: unknown;
  recognition: unknown;
  score: number;
  rate: unknown;
  endReason: string | null;
}

async function playsOn(channel: string): Promise<Play[]> {
  const page = await server.tracks.history({ limit: 100 });
  return page.records
    .filter((record) => record.play?.channel === channel)
    .sort((a, b) => a.dbid - b.dbid)
    .map((record) => ({
      title: record.metadata.title,
      recognition: record.metadata.recognition,
      score: Number(record.metadata.recognition_score),
      rate: record.metadata.recognition_rate,
      endReason: record.play?.endReason ?? null,
    }));
}

withMusic.test(
  'ezstream into the listener and an icecast2 mount pulled as a vinyl stream: every set track titled in order, the found rate kept, the last title cleared as an explicit end while the audio plays on',
  async () => {
    const liveWav = makeSet([...LIVE, ...HELD_OUT.slice(0, 2)], path.join(temp.dir, 'live.wav'));
    // Ogg Vorbis without tags: a tag would be the source's own title, which wins over recognition.
    const liveOgg = path.join(temp.dir, 'live.ogg');
    execFileSync('oggenc', ['-Q', '-b', '96', '-o', liveOgg, liveWav]);
    const deckWav = makeSet([...DECK, ...HELD_OUT.slice(2)], path.join(temp.dir, 'deck.wav'));
    const fastWav = path.join(temp.dir, 'deck-fast.wav');
    execFileSync('sox', [deckWav, fastWav, 'speed', String(SPEED)]);
    const deckMp3 = path.join(temp.dir, 'deck.mp3');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', fastWav, '-map_metadata', '-1', '-b:a', '128k', deckMp3]);

    const live = runEzstream('live', server.icecast?.port ?? 0, SECRET, '/live.ogg', 'Ogg', liveOgg);
    const deck = runEzstream('deck', Number(new URL(icecast.url).port), icecast.sourcePassword, '/turntable.mp3', 'MP3', deckMp3);

    // The last library track's play ends when its title is cleared, before each ezstream is done.
    let liveStillPlaying = false;
    let deckStillPlaying = false;
    await until(
      async () => {
        const [livePlays, deckPlays] = [await playsOn('/live.ogg'), await playsOn('turntables')];
        if (livePlays.length >= 3 && livePlays[2]?.endReason && !liveStillPlaying) liveStillPlaying = live.child.exitCode === null;
        if (deckPlays.length >= 3 && deckPlays[2]?.endReason && !deckStillPlaying) deckStillPlaying = deck.child.exitCode === null;
        return (livePlays[2]?.endReason ?? null) !== null && (deckPlays[2]?.endReason ?? null) !== null;
      },
      'both sets recognised to their last library track, and that play ended',
      240_000,
    );
    const liveRun = await live.exited;
    const deckRun = await deck.exited;
    expect(liveRun).toContain(`connected: http://127.0.0.1:${server.icecast?.port ?? 0}/live.ogg`);
    expect(deckRun).toContain('/turntable.mp3');

    const livePlays = await playsOn('/live.ogg');
    expect(livePlays.map((play) => play.title)).toEqual(LIVE.map((name) => titles.get(name)));
    for (const play of livePlays) {
      expect(play.recognition).toBe('fingerprint');
      expect(play.score).toBeGreaterThan(0.7);
      expect(play.rate).toBeUndefined();
    }
    const deckPlays = await playsOn('turntables');
    expect(deckPlays.map((play) => play.title)).toEqual(DECK.map((name) => titles.get(name)));
    for (const play of deckPlays) {
      expect(play.recognition).toBe('fingerprint');
      expect(Math.abs(Number(play.rate) - SPEED)).toBeLessThanOrEqual(0.01);
    }
    // Cleared after several windows without a match: an explicit end, while the held-out tracks still played.
    expect([livePlays[2]?.endReason, deckPlays[2]?.endReason]).toEqual(['explicit', 'explicit']);
    expect({ liveStillPlaying, deckStillPlaying }).toEqual({ liveStillPlaying: true, deckStillPlaying: true });
    // The pulled mount did not exist before its source came: a 404, connected to again.
    expect(logs.some((line) => line.includes('HTTP 404'))).toBe(true);
  },
  300_000,
);
