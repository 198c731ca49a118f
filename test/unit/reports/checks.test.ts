import type { ReportPlay } from '../../../src/reports/rows';
import { PLAYS, SESSIONS } from '../../fixtures/reports/play-log';
import { arraySource, makeRun, renderToText, US_SETTINGS } from '../../helpers/reports';
import { FORMATS } from '../../../src/reports/formats';
import { inspectReport } from '../../../src/reports/run-report';
import { problemLine } from '../../../src/reports/checks';
import { REPORT_FORMATS, type ReportFormatName } from '../../../src/reports/format';

// `svc report check`: each check fires on a log made to break it, and none on the clean log.

const base = PLAYS[0];
const broken = (dbid: number, startMinute: number, fields: Partial<ReportPlay>): ReportPlay => ({
  ...base,
  dbid,
  started_at: `2026-10-01T20:${String(startMinute).padStart(2, '0')}:00.000Z`,
  ended_at: `2026-10-01T20:${String(startMinute + 4).padStart(2, '0')}:00.000Z`,
  ...fields,
});

async function problemsOf(format: ReportFormatName, plays: ReportPlay[], sessions = SESSIONS, extra = {}): Promise<string[]> {
  const rendered = await renderToText(arraySource(plays, sessions), makeRun(format, '2026-10-01', '2026-10-01', US_SETTINGS, extra));
  return rendered.problems.map(problemLine);
}

describe('report checks', () => {
  it.each(REPORT_FORMATS)('When the log is clean, then %s finds no problem but the ASCII files a Han name', async (format) => {
    // SoundExchange and BMI are ASCII: 日本語 has no spelling there; Cyrillic and accents do.
    // Each names only what its file writes: SoundExchange the album, BMI the writer.
    const ascii: Partial<Record<ReportFormatName, string[]>> = {
      soundexchange: ['dbid 104: album "Ünïcödé 日本語" has no ASCII spelling (written "Unicode ???"); give it one with svc edit 104 album=...'],
      bmi: ['dbid 105: writers "坂本龍一" has no ASCII spelling (written "????"); give it one with svc edit 105 writers=...'],
    };
    expect(await problemsOf(format, PLAYS, SESSIONS, format === 'npr-playlist' ? { channel: 'main' } : {})).toEqual(ascii[format] ?? []);
  });

  it('When an ISRC is malformed and the label is missing, then soundexchange names the play', async () => {
    const problems = await problemsOf('soundexchange', [broken(7, 0, { isrc: 'GB123', label: undefined })]);
    expect(problems).toEqual(['dbid 7: ISRC "GB123" is not 12 characters of the form CC-XXX-YY-NNNNN and no label']);
  });

  it('When there is no ISRC, album or label, then soundexchange and ppl name the play', async () => {
    const play = broken(8, 0, { isrc: undefined, album: undefined, label: undefined });
    expect(await problemsOf('soundexchange', [play])).toEqual(['dbid 8: no ISRC and no album and no label']);
    expect(await problemsOf('ppl', [play])).toEqual(['dbid 8: no ISRC and no album and no label']);
  });

  it('When a valid ISRC stands alone, then the missing album and label are no problem', async () => {
    expect(await problemsOf('soundexchange', [broken(9, 0, { album: undefined, label: undefined })])).toEqual([]);
  });

  it('When a play has no listener count and its channel no sessions, then the census formats say performances are missing', async () => {
    const play = broken(10, 0, { listeners: null, channel: 'jazz' });
    const expected = ['dbid 10: no performances: no listener count was kept and channel "jazz" has no listener sessions'];
    expect(await problemsOf('soundexchange', [play])).toEqual(expected);
    expect(await problemsOf('ppl', [play])).toEqual(expected);
    expect(await problemsOf('bmi', [play])).toEqual([]);
  });

  it('When a play ends before it starts, or has no end, then every format names it', async () => {
    const backwards = broken(11, 10, { ended_at: '2026-10-01T20:09:00.000Z' });
    const open = broken(12, 20, { ended_at: null });
    for (const format of ['bmi', 'prs', 'npr-playlist'] as const) {
      expect(await problemsOf(format, [backwards, open])).toEqual([
        'dbid 11: ends (2026-10-01T20:09:00.000Z) before it starts (2026-10-01T20:10:00.000Z)',
        'dbid 12: no end time (still on air, or never ended)',
      ]);
    }
  });

  it('When two plays of one channel overlap, then the later one is named, and another channel is no overlap', async () => {
    const first = broken(13, 0, {});
    const second = broken(14, 3, {});
    const elsewhere = broken(15, 1, { channel: 'jazz', listeners: { atp: 0, listener_seconds: 0, peak: 0 } });
    expect(await problemsOf('bmi', [first, elsewhere, second])).toEqual([
      'dbid 14: starts 60 s before dbid 13 ends on channel "main" (overlap)',
      'note: report: one file for 2 channels (jazz, main); if each is a licensed service of its own, make one file each with --channel',
    ]);
  });

  it('When a name is in capitals and the source spells it otherwise, then the play is named', async () => {
    const shouting = broken(16, 0, { artist: 'DAFT PUNK', source_names: { artist: 'Daft Punk', title: 'One More Time' } });
    const band = broken(17, 10, { artist: 'ABBA', source_names: { artist: 'ABBA' } });
    expect(await problemsOf('prs', [shouting, band])).toEqual(['dbid 16: artist "DAFT PUNK" is in capitals; the source spells it "Daft Punk"']);
  });

  it('When a recording is spelled in capitals on one play and in mixed case on another, then the capitals play is named', async () => {
    const before = broken(22, 0, { artist: 'DAFT PUNK', title: 'ONE MORE TIME', isrc: undefined });
    const mixed = broken(23, 10, { isrc: undefined });
    const after = broken(24, 20, { artist: 'DAFT PUNK', isrc: undefined });
    expect(await problemsOf('prs', [before, mixed, after])).toEqual([
      'dbid 22: artist "DAFT PUNK" is in capitals; the same recording is spelled "Daft Punk" elsewhere in the log',
      'dbid 22: title "ONE MORE TIME" is in capitals; the same recording is spelled "One More Time" elsewhere in the log',
      'dbid 24: artist "DAFT PUNK" is in capitals; the same recording is spelled "Daft Punk" elsewhere in the log',
    ]);
  });

  it('When a play has no title, then it is named', async () => {
    expect(await problemsOf('prs', [broken(18, 0, { title: ' ' })])).toEqual(['dbid 18: no title']);
  });

  it('When plays are on two channels and no channel is chosen, then npr-playlist asks for one', async () => {
    const plays = [broken(19, 0, {}), broken(20, 10, { channel: 'jazz' })];
    expect(await problemsOf('npr-playlist', plays)).toEqual([
      'report: plays on 2 channels (jazz, main): NPR/DS takes one file per stream; choose one with --channel',
    ]);
    expect(await problemsOf('npr-playlist', plays, SESSIONS, { channel: 'jazz' })).toEqual([]);
  });

  it('When sessions keep only a hashed address or end before they start, then npr-streams says so', async () => {
    const hashed = { ...SESSIONS[0], id: 30, address: undefined };
    const backwards = { ...SESSIONS[1], id: 31, disconnected_at: '2026-10-01T23:00:00.000Z' };
    expect(await problemsOf('npr-streams', PLAYS, [hashed, backwards])).toEqual([
      'session 31: disconnects (2026-10-01T23:00:00.000Z) before it connects (2026-10-01T23:01:00.000Z)',
      'report: 1 of 2 sessions have only a hashed address; NPR/DS needs the address (set playlog.keepAddresses)',
    ]);
  });

  it('When jingles and short plays are in the log, then they are left out and counted', async () => {
    const short = broken(21, 30, { ended_at: '2026-10-01T20:30:20.000Z' });
    const rendered = await renderToText(
      arraySource([...PLAYS, short], SESSIONS),
      makeRun('bmi', '2026-10-01', '2026-10-01', { ...US_SETTINGS, minSeconds: 30 }),
    );
    expect(rendered.facts).toMatchObject({ musicPlays: 5, excludedKinds: { jingle: 1 }, excludedShort: 1 });
    expect(rendered.text).not.toContain('station ID');
  });

  it.each(REPORT_FORMATS)('When %s is checked alone and when its file is made, then both find the same problems and facts', async (format) => {
    // A file made in one pass (a format that gathers every play first) checks as it reads: its
    // problems must be those of `svc report check`, which is always a pass of its own.
    const plays = [
      broken(40, 0, { isrc: 'GB123', label: undefined, listeners: null, channel: 'jazz' }),
      broken(41, 3, { artist: 'DAFT PUNK', isrc: undefined }),
      broken(42, 10, { isrc: undefined, ended_at: '2026-10-01T20:09:00.000Z' }),
      broken(43, 20, { kind: 'jingle' }),
      broken(44, 30, { ended_at: null }),
    ];
    const source = arraySource(plays, SESSIONS);
    const run = makeRun(format, '2026-10-01', '2026-10-01', US_SETTINGS);
    const alone: string[] = [];
    const facts = await inspectReport({ source, format: FORMATS[format], minSessionSeconds: 0 }, run, (problem) => {
      alone.push(problemLine(problem));
    });
    const made = await renderToText(source, run);
    // The streaming log lists sessions, not plays: no play problem blocks it.
    if (format === 'npr-streams') expect(alone).toEqual([]);
    else expect(alone.length).toBeGreaterThan(2);
    expect(made.problems.map(problemLine)).toEqual(alone);
    expect(made.facts).toEqual(facts);
  });

  it.each(['soundexchange', 'npr-playlist', 'ppl', 'prs', 'bmi'] as const)(
    'When a play stayed open for a day or far past its length, then %s names it',
    async (format) => {
      const day = broken(50, 0, { ended_at: '2026-10-02T20:00:00.000Z', duration: 200 });
      const long = broken(51, 5, { ended_at: '2026-10-01T20:45:00.000Z', duration: 200 });
      const fine = broken(52, 50, { ended_at: '2026-10-01T20:58:00.000Z', duration: 200 });
      const problems = await problemsOf(format, [day, long, fine]);
      expect(problems.filter((line) => line.includes('far longer'))).toEqual([
        'dbid 50: on air 86400 s of a 200-s recording: far longer than it can have played; set its end (svc edit 50 ended_at=...)',
        'dbid 51: on air 2400 s of a 200-s recording: far longer than it can have played; set its end (svc edit 51 ended_at=...)',
      ]);
    },
  );

  it('When the channel asked for has no plays, then the check names the channels the range has', async () => {
    expect(await problemsOf('npr-playlist', PLAYS, SESSIONS, { channel: 'mian' })).toEqual([
      'report: no music plays on channel "mian" from 2026-10-01 to 2026-10-01 (the range\'s channels: main)',
    ]);
  });

  it('When the range has no plays, or ends after now, then the check says so', async () => {
    const source = arraySource(PLAYS, SESSIONS);
    const empty = await renderToText(source, makeRun('bmi', '2026-09-01', '2026-09-30', US_SETTINGS));
    expect(empty.problems.map(problemLine)).toEqual(['report: no music plays from 2026-09-01 to 2026-09-30: nothing to report']);
    const future = await renderToText(source, makeRun('prs', '2026-10-01', '2026-11-30', US_SETTINGS));
    expect(future.problems.map(problemLine)).toEqual(['report: the range ends after now (2026-11-30 is not over): ask again once it is']);
  });

  it('When sessions are on two streams and no channel is chosen, then npr-streams asks for one, and a capitals play does not block it', async () => {
    const other = { ...SESSIONS[0], id: 9, channel: 'jazz' };
    const capitals = [broken(60, 0, { artist: 'DAFT PUNK' }), broken(61, 10, {})];
    expect(await problemsOf('npr-streams', capitals, [...SESSIONS, other])).toEqual([
      'report: sessions on 2 channels (jazz, main): NPR/DS no longer accepts two streams in one log file; choose one with --channel',
    ]);
    const one = await renderToText(
      arraySource(capitals, [...SESSIONS, other]),
      makeRun('npr-streams', '2026-10-01', '2026-10-01', US_SETTINGS, { channel: 'jazz' }),
    );
    expect(one.problems).toEqual([]);
    expect(one.fileName).toBe('KSVC-jazz-streams-20261001-20261001.txt');
    expect(one.text.split('\n').filter(Boolean)).toHaveLength(1);
  });

  it.each(REPORT_FORMATS)('When names and a player start like spreadsheet formulas, then %s writes no formula cell and notes each', async (format) => {
    const formula = broken(70, 0, {
      artist: '=HYPERLINK("http://x.example","click")',
      title: '+SUM(A1:A9)',
      album: '@cmd',
      label: '-2+3',
      composers: ['=1+1'],
    });
    const agent = { ...SESSIONS[0], user_agent: "=cmd|' /C calc'!A0" };
    const extra = format === 'ppl' ? { programmeDate: '2026-10-01' } : {};
    const rendered = await renderToText(arraySource([formula], [agent]), makeRun(format, '2026-10-01', '2026-10-01', US_SETTINGS, extra));
    const cells = rendered.text
      .split(/\r?\n|\r/)
      .flatMap((line) => (format === 'bmi' ? [line.slice(101, 141), line.slice(141, 181), line.slice(181, 221)] : line.split(/[\t|,]/)))
      .map((cell) => cell.replace(/^[\^"]/, ''));
    expect(cells.filter((cell) => /^[=+\-@]/.test(cell))).toEqual([]);
    expect(rendered.problems.filter((problem) => problem.note && problem.what.includes('spreadsheet formula')).length).toBe(format === 'npr-streams' ? 1 : 4);
    expect(rendered.problems.filter((problem) => !problem.note)).toEqual([]);
  });
});

describe('report checks: no silent zeros (docs/channels.md)', () => {
  const zero = { atp: 0, listener_seconds: 0, peak: 0 };
  it('When a play counted 0 listeners on a channel no audience mount feeds, then the check names it; on a fed channel a 0 is a count', async () => {
    const plays = [broken(21, 0, { channel: '/live.ogg', listeners: zero }), broken(22, 10, { channel: 'main', listeners: zero })];
    const problems = await renderToText(
      arraySource(plays, SESSIONS),
      makeRun('soundexchange', '2026-10-01', '2026-10-01', { ...US_SETTINGS, heardChannels: ['main'] }, {}),
    );
    const lines = problems.problems.map(problemLine).filter((line) => line.includes('listeners on channel'));
    expect(lines).toEqual([expect.stringMatching(/^dbid 21: 0 listeners on channel "\/live\.ogg", which no audience mount feeds/)]);
  });

  it('When no listener source is configured at all, then a 0 is not checked', async () => {
    const plays = [broken(23, 0, { channel: '/live.ogg', listeners: zero })];
    const problems = await problemsOf('soundexchange', plays);
    expect(problems.filter((line) => line.includes('listeners on channel'))).toEqual([]);
  });
});
