import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReportFormatName, ReportRun } from '../../../src/reports/format';
import { DST_PLAYS, PLAYS, SESSIONS } from '../../fixtures/reports/play-log';
import { problemLine } from '../../../src/reports/checks';
import { arraySource, makeRun, renderToText, US_SETTINGS } from '../../helpers/reports';

// Every format from one fixed play log and fixed sessions, byte for byte against
// test/fixtures/reports/*. `UPDATE_GOLDEN=1` rewrites them (then read the diff before committing).

const UK_SETTINGS = { ...US_SETTINGS, service: 'Radio SVC', timeZone: 'Europe/London' };
const DIR = join(__dirname, '../../fixtures/reports');

interface Case {
  golden: string;
  run: ReportRun;
  fileName: string;
  /** What the check says of the fixed log for this file; none when left out. */
  problems?: string[];
  dst?: boolean;
}

/**
 * SoundExchange and BMI are ASCII (docs/reports.md "Names in the files"): the fixed log's Han
 * names have no spelling there, each in the file that writes it (an album in SoundExchange's, a
 * writer in BMI's).
 */
const HAN = ['dbid 104: album "Ünïcödé 日本語" has no ASCII spelling (written "Unicode ???"); give it one with svc edit 104 album=...'];
const HAN_WRITER = ['dbid 105: writers "坂本龍一" has no ASCII spelling (written "????"); give it one with svc edit 105 writers=...'];

const run = (format: ReportFormatName, extra: Partial<ReportRun> = {}) => makeRun(format, '2026-10-01', '2026-10-01', US_SETTINGS, extra);
const ukRun = (format: ReportFormatName, extra: Partial<ReportRun> = {}) => makeRun(format, '2026-10-01', '2026-10-02', UK_SETTINGS, extra);

const CASES: Case[] = [
  { golden: 'soundexchange.txt', run: run('soundexchange'), fileName: 'KSVC20261001-20261001.txt', problems: HAN },
  {
    golden: 'soundexchange-e7.txt',
    run: makeRun('soundexchange', '2026-10-01', '2026-10-01', { ...US_SETTINGS, soundexchange: { layout: 'e7', fileName: '2007' } }),
    fileName: 'KSVC20261001_20261001_A.txt',
    problems: HAN,
  },
  { golden: 'soundexchange.csv', run: run('soundexchange', { variant: 'csv' }), fileName: 'KSVC20261001-20261001.csv', problems: HAN },
  { golden: 'npr-playlist.txt', run: run('npr-playlist'), fileName: 'KSVC-main-playlist-20261001-20261001.txt' },
  { golden: 'npr-streams.txt', run: run('npr-streams'), fileName: 'KSVC-main-streams-20261001-20261001.txt' },
  { golden: 'ppl.txt', run: ukRun('ppl'), fileName: 'Radio_SVC-ppl-20261001-20261002.txt' },
  {
    golden: 'ppl-programme.csv',
    run: makeRun('ppl', '2026-10-01', '2026-10-01', UK_SETTINGS, { programmeDate: '2026-10-01' }),
    fileName: 'Radio_SVC-ppl-programme-20261001.csv',
  },
  { golden: 'prs.txt', run: ukRun('prs'), fileName: 'Radio_SVC-prs-20261001-20261002.txt' },
  { golden: 'bmi.txt', run: run('bmi'), fileName: 'KSVC2610.emr', problems: HAN_WRITER },
  // The clock changes: March holds both spring changes (New York 8th, London 29th); the autumn
  // ranges hold a night the clocks go back, written in standard time throughout.
  ...(['npr-playlist', 'bmi', 'prs'] as const).flatMap((format): Case[] => {
    const extension = format === 'bmi' ? 'emr' : 'txt';
    return [
      { golden: `dst-march-us-${format}.${extension}`, run: makeRun(format, '2026-03-01', '2026-03-31', US_SETTINGS), fileName: '', dst: true },
      { golden: `dst-march-uk-${format}.${extension}`, run: makeRun(format, '2026-03-01', '2026-03-31', UK_SETTINGS), fileName: '', dst: true },
      { golden: `dst-autumn-us-${format}.${extension}`, run: makeRun(format, '2026-10-25', '2026-11-21', US_SETTINGS), fileName: '', dst: true },
      { golden: `dst-autumn-uk-${format}.${extension}`, run: makeRun(format, '2026-10-01', '2026-10-28', UK_SETTINGS), fileName: '', dst: true },
    ];
  }),
];

describe('report formats against golden files', () => {
  it.each(CASES)('When $golden is written from the fixed log, then it matches byte for byte', async ({ golden, run: caseRun, fileName, problems, dst }) => {
    const rendered = await renderToText(arraySource(dst ? DST_PLAYS : PLAYS, dst ? [] : SESSIONS), caseRun);
    const path = join(DIR, golden);
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(path, rendered.text);
    if (!dst) {
      expect(rendered.problems.map(problemLine)).toEqual(problems ?? []);
      expect(rendered.fileName).toBe(fileName);
    }
    expect(Buffer.from(rendered.text, 'utf8').equals(readFileSync(path))).toBe(true);
  });
});

describe('times through the night the clocks go back', () => {
  it.each(['npr-playlist', 'bmi', 'prs'] as const)('When %s holds a night the clocks go back, then no time in it goes backwards', async (format) => {
    const rendered = await renderToText(arraySource(DST_PLAYS, []), makeRun(format, '2026-10-25', '2026-11-21', US_SETTINGS));
    const stamps = rendered.text
      .split(/\r?\n/)
      .map((line) =>
        /(\d{2})\/(\d{2})\/(\d{4}) (\d{2}:\d{2}:\d{2})|(\d{4})(\d{2})(\d{2})(\d{2}:\d{2}:\d{2})|^(\d{4}-\d{2}-\d{2})\t(\d{2}:\d{2}:\d{2})/.exec(line),
      )
      .filter((match) => match !== null)
      .map((m) => (m[1] ? `${m[3]}${m[1]}${m[2]}${m[4]}` : m[5] ? `${m[5]}${m[6]}${m[7]}${m[8]}` : `${m[9].replaceAll('-', '')}${m[10]}`));
    expect(stamps.length).toBeGreaterThanOrEqual(2);
    expect([...stamps].sort()).toEqual(stamps);
    expect(new Set(stamps).size).toBe(stamps.length);
  });
});
