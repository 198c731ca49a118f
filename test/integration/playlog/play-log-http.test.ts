import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { encodeVorbis, makeTone } from '../../helpers/audio-files';
import { eventually } from '../../helpers/eventually';
import { expectNothingBefore, manualClock } from '../../helpers/manual-clock';
import { asObject, postJson, request } from '../../helpers/http';
import { startIcecastTestServer } from '../../helpers/icecast-source';
import { describeWithPeers } from '../../helpers/peers';
import { startReceiver } from '../../helpers/receiver';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// The play log over HTTP (docs/play-log.md): every end reason, the kinds a station's rules set,
// the performance complement in the answer and in /v1/status, and an output's delay.

const SECRET = 'playlog-http-secret';

interface Entry {
  dbid: number;
  title: string;
  started_at: string;
  ended_at: string | null;
  end_reason: string | null;
  kind: string;
  channel: string;
  trimmed_seconds?: number;
}

const historyOf = async (t: TestServer): Promise<Entry[]> => ((await request(`${t.url}/v1/history`)).json as { tracks: Entry[] }).tracks.reverse();
const submit = (t: TestServer, fields: Record<string, unknown>) => postJson(`${t.url}/v1/remoteinput`, { secret: SECRET, ...fields });

describe('play log over HTTP', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      config: {
        secret: SECRET,
        playlog: { complement: true, kindRules: [{ match: { artist: '^Station ID$' }, kind: 'id' }], shortItemSeconds: 20, shortItemKind: 'jingle' },
      },
    });
  });
  afterAll(() => t.close());

  it('When plays follow each other and the last is ended explicitly, then they end with next and explicit; a second end finds nothing on air', async () => {
    await submit(t, { artist: 'A', title: 'first', channel: 'ends' });
    await submit(t, { artist: 'B', title: 'second', channel: 'ends' });
    const unauthorized = await postJson(`${t.url}/v1/remoteinput/end`, { channel: 'ends' });
    expect(unauthorized.status).toBe(403);
    const ended = await postJson(`${t.url}/v1/remoteinput/end`, { secret: SECRET, channel: 'ends' });
    expect(ended.status).toBe(200);
    expect((await postJson(`${t.url}/v1/remoteinput/end`, { secret: SECRET, channel: 'ends' })).status).toBe(404);
    const plays = (await historyOf(t)).filter((entry) => entry.channel === 'ends');
    expect(plays.map((entry) => [entry.title, entry.end_reason])).toEqual([
      ['first', 'next'],
      ['second', 'explicit'],
    ]);
    expect(plays[0]?.ended_at).toBe(plays[1]?.started_at);
    expect(asObject(ended.json)).toEqual({ channel: 'ends', dbid: plays[1]?.dbid });
  });

  it('When a submitted duration runs out with nothing after it, then the play ends with duration at its start plus the duration', async () => {
    const answer = asObject((await submit(t, { artist: 'C', title: 'timed', channel: 'timed', duration: 1 })).json);
    const play = await eventually(
      async () => (await historyOf(t)).find((entry) => entry.dbid === answer.dbid),
      (entry) => entry?.ended_at !== null,
    );
    expect(play?.end_reason).toBe('duration');
    expect(Date.parse(play?.ended_at ?? '') - Date.parse(play?.started_at ?? '')).toBe(1000);
  });

  it('When the current play ends by its duration, then /v1/last shows the end at once, without waiting for a next play', async () => {
    const answer = asObject((await submit(t, { artist: 'C', title: 'last timed', channel: 'timed-last', duration: 1 })).json);
    const last = await eventually(
      async () => asObject((await request(`${t.url}/v1/last`)).json),
      (body) => body.dbid === answer.dbid && body.ended_at !== null,
      5000,
    );
    expect(last).toMatchObject({ end_reason: 'duration', channel: 'timed-last' });
    expect(Date.parse(String(last.ended_at)) - Date.parse(String(last.started_at))).toBe(1000);
  });

  it('When a play says it started before the previous one ended, then the previous is trimmed and the cut kept', async () => {
    await submit(t, { artist: 'D', title: 'long', channel: 'trim', duration: 1 });
    const long = await eventually(
      async () => (await historyOf(t)).find((entry) => entry.title === 'long'),
      (entry) => entry?.ended_at !== null,
    );
    const startedAt = new Date(Date.parse(long?.started_at ?? '') + 400).toISOString();
    const late = await submit(t, { artist: 'E', title: 'late', channel: 'trim', started_at: startedAt });
    expect(asObject(late.json).warnings).toBeUndefined();
    const trimmed = (await historyOf(t)).find((entry) => entry.title === 'long');
    expect(trimmed).toMatchObject({ ended_at: startedAt, end_reason: 'next', trimmed_seconds: 0.6 });
  });

  it('When started_at is far in the past, then the arrival is used and the answer warns', async () => {
    const answer = asObject((await submit(t, { artist: 'F', title: 'old', channel: 'window', started_at: '2020-01-01T00:00:00Z' })).json);
    expect(answer.warnings).toEqual([expect.stringContaining('the arrival time is used')]);
  });

  it('When rules match, then the kind is set: a station ID, a short jingle; a jingle never counts as music for the complement', async () => {
    await submit(t, { artist: 'Station ID', title: 'Top of the hour', channel: 'kinds' });
    await submit(t, { artist: 'Sweeper', title: 'Short', duration: 5, channel: 'kinds' });
    await submit(t, { artist: 'Band', title: 'Song', duration: 200, channel: 'kinds' });
    const kinds = (await historyOf(t)).filter((entry) => entry.channel === 'kinds').map((entry) => [entry.title, entry.kind]);
    expect(kinds).toEqual([
      ['Top of the hour', 'id'],
      ['Short', 'jingle'],
      ['Song', 'music'],
    ]);
    // Jingles from one "album" never make a complement warning, however many.
    for (let i = 0; i < 5; i += 1) {
      const answer = asObject((await submit(t, { artist: 'Imaging', title: `jingle ${i}`, album: 'Imaging', kind: 'jingle', channel: 'kinds' })).json);
      expect(answer.warnings).toBeUndefined();
    }
  });

  it('When a 4th play from one release comes within 3 hours, then the answer, the log and /v1/status warn at it, not before', async () => {
    const answers = [];
    for (const [artist, title] of [
      ['Massive Attack', 'Angel'],
      ['Other', 'x'],
      ['Massive Attack', 'Teardrop'],
      ['Another', 'y'],
      ['Massive Attack', 'Inertia Creeps'],
      ['Third', 'z'],
      ['Massive Attack', 'Dissolved Girl'],
    ]) {
      const album = artist === 'Massive Attack' ? 'Mezzanine' : `${artist} album`;
      answers.push(asObject((await submit(t, { artist, title, album, channel: 'complement' })).json).warnings);
    }
    expect(answers.slice(0, 6)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
    expect(answers[6]).toEqual([expect.stringContaining('4 plays from release "Mezzanine" within 3 hours')]);
    expect(t.logs.some((line) => line.includes('4 plays from release "Mezzanine"'))).toBe(true);
    const status = asObject((await request(`${t.url}/v1/status`)).json);
    expect(status.playlog_warnings).toEqual([expect.objectContaining({ channel: 'complement', warning: expect.stringContaining('Mezzanine') })]);
  });
});

/** When the store stamped the change of record `dbid` (ms since the epoch). */
function changeStamp(dbFile: string, dbid: number): number {
  const sqlite = new Database(dbFile, { readonly: true });
  try {
    const row = sqlite.prepare("SELECT created_at FROM output_changes WHERE event = 'changed' AND dbid = ?").get(dbid) as { created_at: number } | undefined;
    if (!row) throw new Error(`no change row for ${dbid}`);
    return row.created_at;
  } finally {
    sqlite.close();
  }
}

describe('play log: an output with a delay', () => {
  it('When an output has delay: 2, then its message arrives 2 s after the change, never before; one without a delay at once', async () => {
    const receiver = await startReceiver();
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    // The queues' clock, moved by hand (test/helpers/manual-clock.ts): the delay is proven by order.
    // It starts behind the store's own stamp of the change, from which the delay counts.
    const clock = manualClock(Date.now() - 60_000);
    const t = await startTestServer({
      outputClock: clock.now,
      config: {
        secret: SECRET,
        outputs: [
          { name: 'late', type: 'webhook', url: `${receiver.url}/late`, secret, delay: 2 },
          { name: 'now', type: 'webhook', url: `${receiver.url}/now`, secret },
        ],
      } as never,
      outputPollMs: 50,
    });
    try {
      const answer = await submit(t, { artist: 'A', title: 'Delayed' });
      expect(answer.status).toBe(200);
      // The change as the store stamped it, in the same transaction as the record.
      const changedAt = changeStamp(t.dbFile, Number(asObject(answer.json).dbid));
      expect(changedAt).toBeGreaterThan(clock.at);
      // At the change, the one without a delay comes (its speed: bench/outputs.bench.js's receipt
      // row); the delayed one not a millisecond before 2 s after it on the queues' clock, then at once.
      clock.set(changedAt);
      expect((await receiver.waitFor(1, 10_000)).map((one) => one.path)).toEqual(['/now']);
      await expectNothingBefore(clock, changedAt + 2000, () => receiver.received.length);
      expect((await receiver.waitFor(2, 10_000)).map((one) => one.path)).toEqual(['/now', '/late']);
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});

describeWithPeers(['sox', 'oggenc', 'vorbiscomment', 'ezstream'], 'play log: a source that goes away', () => {
  it('When ezstream stops streaming to the svc Icecast listener, then the play on its mount ends with source_disconnect', async () => {
    const temp = makeTempDir('svc-playlog-ezstream-');
    const svc = await startIcecastTestServer('hackme', { config: { secret: 'hackme' } });
    try {
      const file = encodeVorbis(makeTone(temp.dir, 'one', 440, 2), { artist: 'Live Artist', title: 'Live Title', album: 'Live Album' });
      const playlist = path.join(temp.dir, 'playlist.txt');
      fs.writeFileSync(playlist, `${file}\n`);
      const configFile = path.join(temp.dir, 'ezstream.xml');
      fs.writeFileSync(
        configFile,
        `<ezstream><servers><server><hostname>127.0.0.1</hostname><port>${svc.listener.port}</port><password>hackme</password></server></servers>
  <streams><stream><mountpoint>/live.ogg</mountpoint><format>Ogg</format></stream></streams>
  <intakes><intake><type>playlist</type><filename>${playlist}</filename><stream_once>yes</stream_once></intake></intakes></ezstream>`,
        { mode: 0o600 },
      );
      // stream_once: ezstream plays the file and disconnects, as a DJ who stops the stream.
      await new Promise<void>((resolve) => execFile('ezstream', ['-c', configFile], { timeout: 60_000 }, () => resolve()));
      const play = await eventually(
        async () => ((await request(`${svc.ts.url}/v1/history`)).json as { tracks: Entry[] }).tracks[0],
        (entry) => entry?.end_reason === 'source_disconnect',
      );
      expect(play).toMatchObject({ title: 'Live Title', channel: '/live.ogg', end_reason: 'source_disconnect' });
    } finally {
      await svc.close();
      temp.cleanup();
    }
  });
});
