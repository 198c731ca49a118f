import type { DeepPartial } from '../helpers/test-server';
import type { Config } from '../../src/config/schema';
import { runCli } from '../helpers/run-cli';
import { startTestServer, type TestServer } from '../helpers/test-server';

// `svc report recount --channel` takes its local dates in the channel's own time zone
// (docs/channels.md: channels[].report.timeZone; docs/play-log.md "Recounting"). The same stored
// plays are recounted for the same local day before and after the channel's zone is changed in the
// config: the range's boundaries move with it, so other plays are in the range, and a recount
// without --channel keeps reports.timeZone.

const SECRET = 'zone-secret';
const ICECAST = 'http://127.0.0.1:8000';
const DAY = ['--from', '2026-10-05', '--to', '2026-10-05'];

/** The config with FM's zone: empty (reports.timeZone, UTC) or its own. */
const configWith = (timeZone?: string): DeepPartial<Config> => ({
  secret: SECRET,
  reports: { timeZone: 'UTC' },
  playlog: { minSessionSeconds: 10 },
  channels: [
    {
      name: 'FM',
      ingest: { mounts: [], streams: [], aliases: [] },
      audience: [{ url: ICECAST, mounts: ['/stream.mp3'] }],
      report: { service: '', category: '', streamId: '', timeZone: timeZone ?? '' },
    },
  ],
});

describe('svc report recount --channel in the channel time zone', () => {
  let before: TestServer;
  let after: TestServer | undefined;

  beforeAll(async () => {
    before = await startTestServer({ config: configWith() });
    // Four plays around the two zones' midnights; the fifth ends the fourth.
    // In UTC the local day 2026-10-05 is [05T00:00Z, 06T00:00Z); in Los Angeles (PDT, UTC-7) [05T07:00Z, 06T07:00Z).
    const starts = ['2026-10-05T03:00:00.000Z', '2026-10-05T06:30:00.000Z', '2026-10-05T07:30:00.000Z', '2026-10-06T06:30:00.000Z', '2026-10-06T07:30:00.000Z'];
    for (const [index, startedAt] of starts.entries()) {
      await before.server.tracks.insert({
        receivedSeq: await before.server.tracks.nextReceivedSeq(),
        receivedAt: startedAt,
        metadata: { artist: 'Someone', title: `play ${index + 1}` },
        play: { startedAt, channel: 'FM', kind: 'music', usage: 'feature' },
      });
    }
    // One listener, during play 4 only (Los Angeles' 2026-10-05, UTC's 2026-10-06).
    const key = { server: ICECAST, mount: '/stream.mp3', clientId: '1' };
    await before.server.plays.openSession(
      { ...key, channel: 'FM', source: 'auth', address: 'hash-a', userAgent: 'VLC/3.0.20', connectedAt: '2026-10-06T06:31:00.000Z' },
      100,
    );
    await before.server.plays.closeSession(key, '2026-10-06T06:50:00.000Z');
  }, 60_000);
  afterAll(async () => {
    await after?.close();
    await before?.close();
  });

  const recount = async (t: TestServer, args: string[]) => {
    const answer = await runCli(['report', 'recount', ...DAY, '--json', ...args, '--url', t.url, '--secret', SECRET]);
    expect(answer).toMatchObject({ code: 0 });
    // The play log counts ended plays by itself meanwhile: the counts before are its, not this test's.
    const result = JSON.parse(answer.stdout) as { channels: Array<{ channel: string; plays: number; atpAfter: number }> };
    return result.channels.map(({ channel, plays, atpAfter }) => ({ channel, plays, atpAfter }));
  };

  it("When FM's time zone is changed from UTC to America/Los_Angeles, then the recount of its 2026-10-05 covers that zone's day", async () => {
    // UTC: plays 1, 2 and 3 (they started on 2026-10-05 UTC); none had a listener.
    expect(await recount(before, ['--channel', 'FM'])).toEqual([{ channel: 'FM', plays: 3, atpAfter: 0 }]);
    await before.stop();
    after = await startTestServer({ config: configWith('America/Los_Angeles'), dbFile: before.dbFile });
    // Los Angeles: plays 3 and 4 (07:30Z and 06:30Z the next day are 00:30 and 23:30 PDT); play 4 had the listener.
    expect(await recount(after, ['--channel', 'FM'])).toEqual([{ channel: 'FM', plays: 2, atpAfter: 1 }]);
    // Without --channel the run is the station's: reports.timeZone (UTC) still.
    expect(await recount(after, [])).toEqual([{ channel: 'FM', plays: 3, atpAfter: 0 }]);
  });
});
