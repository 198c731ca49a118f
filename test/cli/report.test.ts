import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../helpers/run-cli';
import { makeTempDir } from '../helpers/temp-dir';
import { startTestServer, type TestServer } from '../helpers/test-server';

// `svc report FORMAT` and `svc report check FORMAT` (docs/cli.md "`svc report`") against a real
// server: a check with problems exits 1, the file is refused without --allow-problems, and the
// same after the fix writes the society's file name into a directory.

const SECRET = 'cli-report-secret';

describe('svc report', () => {
  let t: TestServer;
  const out = makeTempDir();
  const client = () => ['--url', t.url, '--secret', SECRET];
  const range = ['--from', '2026-10-01', '--to', '2026-10-31'];

  beforeAll(async () => {
    t = await startTestServer({ config: { secret: SECRET, reports: { service: 'KSVC', category: 'A', timeZone: 'America/New_York' } } });
    const { tracks } = t.server;
    const play = async (startedAt: string, metadata: Record<string, string>) =>
      tracks.insert({
        receivedSeq: await tracks.nextReceivedSeq(),
        receivedAt: startedAt,
        metadata,
        play: { startedAt, channel: 'main', kind: 'music', usage: 'feature' },
      });
    await play('2026-10-05T20:00:00.000Z', { artist: 'Daft Punk', title: 'One More Time', album: 'Discovery', label: 'Virgin', isrc: 'GBDUW0000053' });
    await play('2026-10-05T20:05:20.000Z', { artist: 'Sigur Rós', title: 'Hoppípolla', album: 'Takk...', label: 'EMI' });
    await play('2026-10-05T20:12:00.000Z', { artist: 'Burial', title: 'Archangel' });
  });
  afterAll(async () => {
    await t.close();
    out.cleanup();
  });

  it('When the log has problems, then check lists them, exits 1, and report writes nothing', async () => {
    const check = await runCli(['report', 'check', 'bmi', ...range, ...client()]);
    expect(check.code).toBe(1);
    expect(check.stdout).toBe('dbid 3: no end time (still on air, or never ended)\n');
    expect(check.stderr).toContain('3 music plays reported');

    const refused = await runCli(['report', 'bmi', ...range, '--out', out.dir, ...client()]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('dbid 3: no end time');
    expect(refused.stderr).toContain('nothing written');
    expect(fs.readdirSync(out.dir)).toEqual([]);
  });

  it('When --allow-problems is given, then the problems go to stderr and the file is written under its name', async () => {
    const written = await runCli(['report', 'bmi', ...range, '--out', out.dir, '--allow-problems', ...client()]);
    expect(written.code).toBe(0);
    expect(written.stderr).toContain('dbid 3: no end time');
    const file = path.join(out.dir, 'KSVC2610.emr');
    expect(written.stderr).toContain(`wrote ${file}`);
    // It holds listeners' data: only its owner may read it.
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(
      fs
        .readFileSync(file, 'utf8')
        .split('\r\n')
        .map((record) => record.slice(0, 4)),
    ).toEqual(['HEDR', 'FMDT', 'FMDT', 'FMDT', 'TRLR', '']);
  });

  it('When the play is ended, then the check is clean and the file goes to stdout', async () => {
    expect(await t.server.plays.end('main', '2026-10-05T20:16:00.000Z', 'explicit')).toBe(3);
    const check = await runCli(['report', 'check', 'prs', ...range, ...client()]);
    expect(check).toMatchObject({ code: 0, stdout: '' });
    const file = await runCli(['report', 'prs', ...range, ...client()]);
    expect(file.code).toBe(0);
    expect(file.stdout.split('\n')[0]).toBe('Date\tTime\tTitle\tWriters\tPerformer\tDuration\tISWC\tAlbum\tISRC');
    expect(file.stdout).toContain('2026-10-05\t16:05:20\tHoppípolla\t\tSigur Rós\t00:06:40\t\tTakk...\t');
  });

  it('When the secret is wrong or a date is malformed, then it exits 3 or 2 and says why', async () => {
    const wrong = await runCli(['report', 'check', 'bmi', ...range, '--url', t.url, '--secret', 'nope']);
    expect(wrong.code).toBe(3);
    const malformed = await runCli(['report', 'bmi', '--from', '2026-10-32', '--to', '2026-10-31', ...client()]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('--from: expected a local date YYYY-MM-DD');
  });

  it('When the --out folder does not exist, then it exits 2 before asking anything and writes nothing', async () => {
    const missing = path.join(out.dir, 'no-such-folder', 'report.emr');
    const result = await runCli(['report', 'bmi', ...range, '--out', missing, ...client()]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`--out: the folder ${JSON.stringify(path.dirname(missing))} does not exist; nothing written`);
    expect(fs.existsSync(path.dirname(missing))).toBe(false);
  });

  it('When --help shows the census written into a folder, then the name it shows is the one written (37 CFR 370.4(e)(5) by default)', async () => {
    const help = await runCli(['report', '--help']);
    const shown = /\n {2}wrote (\S+)\n/.exec(help.stdout)?.[1];
    const dir = makeTempDir();
    try {
      const written = await runCli(['report', 'soundexchange', ...range, '--out', dir.dir, '--allow-problems', ...client()]);
      expect(written.code).toBe(0);
      expect(fs.readdirSync(dir.dir)).toEqual([shown]);
    } finally {
      dir.cleanup();
    }
  });

  it('When the streaming log is checked, then its summary counts the listener sessions it lists, not music plays', async () => {
    for (const [clientId, connectedAt, disconnectedAt] of [
      ['1', '2026-10-05T19:58:00.000Z', '2026-10-05T20:30:00.000Z'],
      ['2', '2026-10-05T20:04:00.000Z', '2026-10-05T20:10:00.000Z'],
    ]) {
      const key = { server: 'http://127.0.0.1:8000', mount: '/live', clientId };
      await t.server.plays.openSession({ ...key, channel: 'main', source: 'poll', address: `192.0.2.${clientId}`, userAgent: 'VLC/3.0.20', connectedAt }, 10);
      await t.server.plays.closeSession(key, disconnectedAt);
    }
    const check = await runCli(['report', 'check', 'npr-streams', ...range, ...client()]);
    expect(check).toMatchObject({ code: 0, stdout: '' });
    expect(check.stderr).toBe('2 listener sessions reported; 0 problem(s)\n');
  });
});
