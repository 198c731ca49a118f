import { runCli } from '../helpers/run-cli';
import { startTestServer, type TestServer } from '../helpers/test-server';

// `svc edit DBID FIELD=VALUE...` (docs/cli.md "`svc edit`"): the way a station fixes what
// `svc report check` lists (docs/reports.md "Fixing what the check lists"). A real server, the
// real CLI: the check finds the problems, svc edit corrects the records, the check is clean and
// the census file carries the corrected names.

const SECRET = 'cli-edit-secret';

describe('svc edit', () => {
  let t: TestServer;
  const client = () => ['--url', t.url, '--secret', SECRET];
  const range = ['--from', '2026-10-01', '--to', '2026-10-31'];

  beforeAll(async () => {
    t = await startTestServer({ config: { secret: SECRET, reports: { service: 'KSVC', category: 'A', timeZone: 'UTC' } } });
    const { tracks } = t.server;
    const plays: Array<[string, Record<string, string>, 'music' | 'jingle']> = [
      ['2026-10-05T20:00:00.000Z', { artist: 'Daft Punk', title: 'One More Time', album: 'Discovery', label: 'Virgin', isrc: 'GBDUW0000053' }, 'music'],
      ['2026-10-05T20:05:20.000Z', { artist: 'Burial', title: 'Archangel' }, 'music'],
      ['2026-10-05T20:09:20.000Z', { artist: 'DAFT PUNK', title: 'One More Time', album: 'Discovery', label: 'Virgin', isrc: 'GBDUW0000053' }, 'music'],
      ['2026-10-05T20:14:00.000Z', { artist: 'Moderat', title: 'A New Error', album: 'Moderat', label: 'BPitch Control' }, 'music'],
      // Ends the last song; a jingle on air is not reported, so nothing but the records' own fields is left to fix.
      ['2026-10-05T20:19:00.000Z', { title: 'Station ID' }, 'jingle'],
    ];
    for (const [index, [startedAt, metadata, kind]] of plays.entries()) {
      const { dbid } = await tracks.insert({
        receivedSeq: await tracks.nextReceivedSeq(),
        receivedAt: startedAt,
        metadata,
        play: { startedAt, channel: 'main', kind, usage: 'feature' },
      });
      // Counted as the play log counts them once a play ends (docs/play-log.md "Listeners per play").
      if (index < plays.length - 1) await t.server.plays.setListeners(dbid, { atp: 10 + index, listener_seconds: 3000, peak: 12 });
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it('When the check lists records, then svc edit fixes them and the census file has the corrected names', async () => {
    const before = await runCli(['report', 'check', 'soundexchange', ...range, ...client()]);
    expect(before.code).toBe(1);
    expect(before.stdout).toBe(
      [
        'dbid 2: no ISRC and no album and no label',
        'dbid 3: artist "DAFT PUNK" is in capitals; the same recording is spelled "Daft Punk" elsewhere in the log',
        '',
      ].join('\n'),
    );

    const isrc = await runCli(['edit', '2', 'isrc=GB-ABC-07-00001', 'label=Hyperdub', ...client()]);
    expect(isrc).toMatchObject({ code: 0, stderr: '' });
    expect(isrc.stdout).toBe('dbid 2: Burial - Archangel (isrc, label)\n');
    const artist = await runCli(['edit', '3', 'artist=Daft Punk', '--json', ...client()]);
    expect(artist.code).toBe(0);
    expect(JSON.parse(artist.stdout)).toMatchObject({
      dbid: 3,
      artist: 'Daft Punk',
      title: 'One More Time',
      kind: 'music',
      started_at: '2026-10-05T20:09:20.000Z',
    });

    // What was corrected is named, as notes that block nothing.
    const after = await runCli(['report', 'check', 'soundexchange', ...range, ...client()]);
    expect(after.code).toBe(0);
    expect(after.stdout.split('\n')).toEqual([
      expect.stringMatching(/^note: dbid 2: corrected at \S+Z by cli \S*127\.0\.0\.1: isrc none -> GB-ABC-07-00001; label none -> Hyperdub$/),
      expect.stringMatching(/^note: dbid 3: corrected at \S+Z by cli \S*127\.0\.0\.1: artist DAFT PUNK -> Daft Punk$/),
      '',
    ]);
    const file = await runCli(['report', 'soundexchange', ...range, ...client()]);
    expect(file.code).toBe(0);
    expect(file.stdout.split('\r\n')).toEqual([
      '^KSVC^|^A^|^Daft Punk^|^One More Time^|^GBDUW0000053^|^Discovery^|^Virgin^|22',
      '^KSVC^|^A^|^Burial^|^Archangel^|^GBABC0700001^|^^|^Hyperdub^|11',
      '^KSVC^|^A^|^Moderat^|^A New Error^|^^|^Moderat^|^BPitch Control^|13',
      '',
    ]);
  });

  it('When a play is corrected to a jingle, then the census leaves it out, svc history --json shows its audit trail and the check notes it', async () => {
    const kind = await runCli(['edit', '2', 'kind=jingle', 'usage=background', ...client()]);
    expect(kind).toMatchObject({ code: 0, stderr: '', stdout: 'dbid 2: Burial - Archangel (kind, usage)\n' });
    const file = await runCli(['report', 'soundexchange', ...range, ...client()]);
    expect(file.code).toBe(0);
    expect(file.stdout.split('\r\n')).toEqual([
      '^KSVC^|^A^|^Daft Punk^|^One More Time^|^GBDUW0000053^|^Discovery^|^Virgin^|22',
      '^KSVC^|^A^|^Moderat^|^A New Error^|^^|^Moderat^|^BPitch Control^|13',
      '',
    ]);
    const history = await runCli(['history', '--json', '--limit', '10', ...client()]);
    expect(history.code).toBe(0);
    const entries = history.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const corrected = entries.find((entry) => entry.dbid === 2);
    expect(corrected).toMatchObject({ kind: 'jingle', usage: 'background' });
    expect(corrected?.corrections).toEqual([
      {
        at: expect.any(String),
        by: expect.stringMatching(/^cli /),
        changes: { isrc: { before: null, after: 'GB-ABC-07-00001' }, label: { before: null, after: 'Hyperdub' } },
      },
      {
        at: expect.any(String),
        by: expect.stringMatching(/^cli /),
        changes: { kind: { before: 'music', after: 'jingle' }, usage: { before: 'feature', after: 'background' } },
      },
    ]);
    expect(entries.find((entry) => entry.dbid === 1)).not.toHaveProperty('corrections');
    const check = await runCli(['report', 'check', 'soundexchange', ...range, ...client()]);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/^note: dbid 2: corrected at \S+Z by cli \S+: kind music -> jingle; usage feature -> background$/m);
  });

  it('When a field is given empty, then it is removed; repeated, it is a list', async () => {
    const result = await runCli(['edit', '4', 'writers=Sascha Ring', 'writers=Sebastian Szary', 'label=', '--json', ...client()]);
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(record.writers).toEqual(['Sascha Ring', 'Sebastian Szary']);
    expect(record).not.toHaveProperty('label');
  });

  it('When the change is refused, then it exits with the code of the refusal and says why', async () => {
    const air = await runCli(['edit', '4', 'channel=two', ...client()]);
    expect(air.code).toBe(5);
    expect(air.stderr).toContain("Field 'channel' belongs to the play log");
    const overlap = await runCli(['edit', '4', 'ended_at=2026-10-05T20:20:00Z', ...client()]);
    expect(overlap.code).toBe(5);
    expect(overlap.stderr).toContain('would overlap play 5 on channel "main"');
    const missing = await runCli(['edit', '99', 'title=x', ...client()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No record with dbid 99');
    const secret = await runCli(['edit', '4', 'title=x', '--url', t.url, '--secret', 'wrong']);
    expect(secret.code).toBe(3);
    const usage = await runCli(['edit', '4', 'title', ...client()]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("expected FIELD=VALUE, got 'title'");
    const dbid = await runCli(['edit', '0', 'title=x', ...client()]);
    expect(dbid.code).toBe(2);
  });
});
