import type { PlayListeners } from '../../src/domain/play';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { runCli } from '../helpers/run-cli';
import { startTestServer, type TestServer } from '../helpers/test-server';

// `svc report recount` (docs/play-log.md "Recounting"): a month logged with a wrong mapping (the
// audience's mount fed channel `main` while the DJ's plays were on `/live.ogg`), the mapping fixed
// in the config, the plays recounted from the stored sessions. The real CLI against a real
// server, on both backends: the counts equal a hand count, and without --apply the store is unchanged.

const SECRET = 'recount-secret';
const ICECAST = 'http://127.0.0.1:8000';
const CHANNEL = '/live.ogg';
const at = (clock: string) => `2026-10-05T${clock}.000Z`;

function recount(backend: 'sqlite' | 'postgres'): void {
  let database: TestDatabase | undefined;
  let t: TestServer;
  const client = () => ['--url', t.url, '--secret', SECRET];
  const range = ['--from', '2026-10-05', '--to', '2026-10-05'];
  const kept = async (): Promise<Array<PlayListeners | null>> => {
    const rows: Array<PlayListeners | null> = [];
    for await (const page of t.server.plays.playPages({ from: at('00:00:00'), to: at('23:59:59'), channel: CHANNEL }))
      for (const row of page) if (row.play.endedAt !== null) rows.push(row.play.listeners);
    return rows;
  };

  beforeAll(async () => {
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    t = await startTestServer({
      // The fixed mapping: the audience's /stream.mp3 is the DJ's channel now.
      config: {
        secret: SECRET,
        reports: { timeZone: 'UTC' },
        playlog: { minSessionSeconds: 10, icecast: [{ url: ICECAST, adminUser: 'admin', mounts: { '/stream.mp3': CHANNEL } }] },
      },
      ...(database ? { dbFile: database.url } : {}),
    });
    // Sessions as the wrong mapping recorded them: on channel `main`.
    const sessions: Array<[string, string, string, string, string]> = [
      ['1', 'hash-a', '/stream.mp3', '20:01:00', '20:09:00'],
      ['2', 'hash-b', '/stream.mp3', '20:02:00', '20:03:00'],
      ['3', 'hash-b', '/stream.mp3', '20:03:30', '20:04:00'],
      ['4', 'hash-c', '/stream.mp3', '20:11:00', '20:14:00'],
      ['5', 'hash-probe', '/stream.mp3', '20:12:00', '20:12:05'],
      ['6', 'hash-d', '/other.mp3', '20:01:00', '20:14:00'],
    ];
    for (const [clientId, address, mount, from, to] of sessions) {
      const key = { server: ICECAST, mount, clientId };
      await t.server.plays.openSession({ ...key, channel: 'main', source: 'auth', address, userAgent: 'VLC/3.0.20', connectedAt: at(from) }, 100);
      await t.server.plays.closeSession(key, at(to));
    }
    const plays: Array<[string, string]> = [
      ['20:00:00', 'One More Time'],
      ['20:05:00', 'A New Error'],
      ['20:10:00', 'Archangel'],
      ['20:15:00', 'Still on air'],
    ];
    for (const [clock, title] of plays) {
      await t.server.tracks.insert({
        receivedSeq: await t.server.tracks.nextReceivedSeq(),
        receivedAt: at(clock),
        metadata: { artist: 'Someone', title },
        play: { startedAt: at(clock), channel: CHANNEL, kind: 'music', usage: 'feature' },
      });
    }
    // The play log counted them as they ended, by the store's rule over the sessions as recorded: zeros.
    for (const play of await t.server.plays.uncounted(10))
      await t.server.plays.setListeners(
        play.dbid,
        await t.server.plays.countListeners(play.channel, play.startedAt, play.endedAt, { minSessionSeconds: 10, now: at('23:00:00') }),
      );
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await database?.drop();
  });

  it('When recounted without --apply, then before -> after is shown and the store is unchanged', async () => {
    const before = await kept();
    expect(before.map((listeners) => listeners?.atp)).toEqual([0, 0, 0]);
    const dry = await runCli(['report', 'recount', ...range, '--json', ...client()]);
    expect(dry).toMatchObject({ code: 0 });
    expect(JSON.parse(dry.stdout)).toEqual({ applied: false, channels: [{ channel: CHANNEL, plays: 3, changed: 3, atpBefore: 0, atpAfter: 4 }] });
    expect(await kept()).toEqual(before);
  });

  it('When recounted with --apply, then each play holds the hand count, and a second recount changes nothing', async () => {
    const applied = await runCli(['report', 'recount', ...range, '--apply', ...client()]);
    expect(applied).toMatchObject({ code: 0, stdout: `channel\tplays\tchanged\tATP before -> after\n${CHANNEL}\t3\t3\t0 -> 4\n` });
    expect(applied.stderr).toContain('3 play(s) recounted and written');
    // Hand count: 20:00 A and B (B's reconnect once); 20:05 A; 20:10 C (the 5-second probe is under minSessionSeconds).
    expect(await kept()).toEqual([
      { atp: 2, listener_seconds: 240 + 60 + 30, peak: 2 },
      { atp: 1, listener_seconds: 240, peak: 1 },
      { atp: 1, listener_seconds: 180, peak: 1 },
    ]);
    const again = await runCli(['report', 'recount', ...range, '--json', ...client()]);
    expect(JSON.parse(again.stdout)).toEqual({ applied: false, channels: [{ channel: CHANNEL, plays: 3, changed: 0, atpBefore: 4, atpAfter: 4 }] });
  });

  it('When the sessions are listed with svc listeners, then each shows start, end, duration, channel, mount, hashed address and agent', async () => {
    const listed = await runCli(['listeners', '--since', at('00:00:00'), ...client()]);
    expect(listed).toMatchObject({ code: 0, stderr: 'open now: /live.ogg 0\n' });
    const lines = listed.stdout.trim().split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[0]).toBe(`${at('20:01:00')}  ${at('20:09:00')}  480s  main  /stream.mp3  hash-a  VLC/3.0.20`);
    const json = await runCli(['listeners', '--since', at('20:10:30'), '--json', ...client()]);
    const body = JSON.parse(json.stdout) as { sessions: Array<{ address: string }> };
    expect(body.sessions.map((session) => session.address)).toEqual(['hash-d', 'hash-c', 'hash-probe']);
    const refused = await runCli(['listeners', '--url', t.url, '--secret', 'nope']);
    expect(refused.code).not.toBe(0);
  });

  it('When the secret is wrong or the dates missing, then nothing is recounted', async () => {
    const wrong = await runCli(['report', 'recount', ...range, '--apply', '--url', t.url, '--secret', 'nope']);
    expect(wrong.code).not.toBe(0);
    const missing = await runCli(['report', 'recount', '--to', '2026-10-05', ...client()]);
    expect(missing).toMatchObject({ code: 2 });
  });
}

describe('svc report recount (SQLite)', () => recount('sqlite'));
describe('svc report recount (PostgreSQL)', () => recount('postgres'));
