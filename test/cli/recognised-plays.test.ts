import { postgresForPart, createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { runCli } from '../helpers/run-cli';
import { startTestServer, type TestServer } from '../helpers/test-server';

// Plays recognition made are marked where people read the log (docs/recognition.md "A
// recognised play"): `svc history`'s text lines end in `[recognised SCORE]` (and the rate a deck
// ran at), and `svc report check` counts them in a note and names each with its score. The real
// CLI against a real server, on both backends: the check's list is one SQL query of each.

const SECRET = 'recognised-plays-secret';

function recognisedPlays(backend: 'sqlite' | 'postgres'): void {
  let database: TestDatabase | undefined;
  let t: TestServer;
  const client = () => ['--url', t.url, '--secret', SECRET];
  const range = ['--from', '2026-10-01', '--to', '2026-10-31'];

  beforeAll(async () => {
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    t = await startTestServer({
      config: { secret: SECRET, reports: { service: 'KSVC', category: 'A', timeZone: 'UTC' } },
      ...(database ? { dbFile: database.url } : {}),
    });
    const identity = { album: 'Discovery', label: 'Virgin', isrc: 'GBDUW0000053' };
    const plays: Array<[string, Record<string, string>, string]> = [
      ['2026-10-05T20:00:00.000Z', { artist: 'Daft Punk', title: 'One More Time', ...identity }, 'main'],
      [
        '2026-10-05T20:05:00.000Z',
        { artist: 'Moderat', title: 'A New Error', ...identity, recognition: 'fingerprint', recognition_score: '0.953', recognition_stream: 'icecast:/live' },
        'main',
      ],
      [
        '2026-10-05T20:10:00.000Z',
        {
          artist: 'Burial',
          title: 'Archangel',
          ...identity,
          recognition: 'fingerprint',
          recognition_score: '0.881',
          recognition_rate: '1.05',
          recognition_stream: 'http://deck/',
        },
        'deck',
      ],
      ['2026-10-05T20:15:00.000Z', { title: 'Station ID' }, 'main'],
    ];
    for (const [startedAt, metadata, channel] of plays) {
      const { dbid } = await t.server.tracks.insert({
        receivedSeq: await t.server.tracks.nextReceivedSeq(),
        receivedAt: startedAt,
        metadata,
        play: { startedAt, channel, kind: metadata.title === 'Station ID' ? 'jingle' : 'music', usage: 'feature' },
      });
      await t.server.plays.setListeners(dbid, { atp: 10, listener_seconds: 3000, peak: 12 });
    }
    // Each channel's last play ends, as the play log ends it.
    await t.server.playLog.end('deck', 'explicit');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await database?.drop();
  });

  it('When the setlist is printed as text, then each recognised play ends in its mark, with the rate when a deck ran off pitch', async () => {
    const history = await runCli(['history', '--since', '2026-10-05T00:00Z', '--until', '2026-10-06T00:00Z', ...client()], { env: { TZ: 'UTC' } });
    expect(history).toMatchObject({ code: 0, stderr: '' });
    expect(history.stdout).toBe(
      [
        '20:00  Daft Punk - One More Time',
        '20:05  Moderat - A New Error  [recognised 0.953]',
        '20:10  Burial - Archangel  [recognised 0.881 at +5.0 %]',
        '20:15  Station ID',
        '',
      ].join('\n'),
    );
  });

  it('When the range is checked, then a note counts the recognised music plays with their scores, and one names each', async () => {
    const check = await runCli(['report', 'check', 'soundexchange', ...range, ...client()]);
    // The log has other problems (no listener sessions, an open play); the notes stand among them.
    const lines = check.stdout.trim().split('\n');
    expect(lines).toContain(
      'note: report: 2 of 3 music plays were recognised from the audio, not sent by the source, scores 0.881 to 0.953 (docs/recognition.md)',
    );
    expect(lines).toContain('note: dbid 2: recognised 0.953');
    expect(lines).toContain('note: dbid 3: recognised 0.881 at +5.0 %');
    expect(lines.filter((line) => line.includes('recognised'))).toHaveLength(3);
    // One channel of the two: only its recognised play.
    const deck = await runCli(['report', 'check', 'soundexchange', ...range, '--channel', 'deck', ...client()]);
    expect(deck.stdout).toContain('note: report: 1 of 1 music plays were recognised');
    expect(deck.stdout).not.toContain('dbid 2: recognised');
  });
}

describe('recognised plays in history and the check: SQLite', () => recognisedPlays('sqlite'));
if (postgresForPart('recognised plays in history and the check on PostgreSQL'))
  describe('recognised plays in history and the check: PostgreSQL', () => recognisedPlays('postgres'));
