import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReportFormatName, ReportRun } from '../../../src/reports/format';
import { PLAYS, SESSIONS } from '../../fixtures/reports/play-log';
import { arraySource, makeRun, renderToText, US_SETTINGS } from '../../helpers/reports';

// Every format from one fixed play log and fixed sessions, byte for byte against
// test/fixtures/reports/*. `UPDATE_GOLDEN=1` rewrites them (then read the diff before committing).

const UK_SETTINGS = { ...US_SETTINGS, service: 'Radio SVC', timeZone: 'Europe/London' };
const DIR = join(__dirname, '../../fixtures/reports');

interface Case {
  golden: string;
  run: ReportRun;
  fileName: string;
}

const run = (format: ReportFormatName, extra: Partial<ReportRun> = {}) => makeRun(format, '2026-10-01', '2026-10-01', US_SETTINGS, extra);
const ukRun = (format: ReportFormatName, extra: Partial<ReportRun> = {}) => makeRun(format, '2026-10-01', '2026-10-02', UK_SETTINGS, extra);

const CASES: Case[] = [
  { golden: 'soundexchange.txt', run: run('soundexchange'), fileName: 'KSVC20261001_20261001_A.txt' },
  { golden: 'soundexchange.csv', run: run('soundexchange', { variant: 'csv' }), fileName: 'KSVC20261001_20261001_A.csv' },
  { golden: 'npr-playlist.txt', run: run('npr-playlist'), fileName: 'KSVC-main-playlist-20261001-20261001.txt' },
  { golden: 'npr-streams.txt', run: run('npr-streams'), fileName: 'KSVC-all-streams-20261001-20261001.txt' },
  { golden: 'ppl.txt', run: ukRun('ppl'), fileName: 'Radio_SVC-ppl-20261001-20261002.txt' },
  {
    golden: 'ppl-programme.csv',
    run: makeRun('ppl', '2026-10-01', '2026-10-01', UK_SETTINGS, { programmeDate: '2026-10-01' }),
    fileName: 'Radio_SVC-ppl-programme-20261001.csv',
  },
  { golden: 'prs.txt', run: ukRun('prs'), fileName: 'Radio_SVC-prs-20261001-20261002.txt' },
  { golden: 'bmi.txt', run: run('bmi'), fileName: 'KSVC-bmi-20261001-20261001.txt' },
];

describe('report formats against golden files', () => {
  it.each(CASES)('When $golden is written from the fixed log, then it matches byte for byte', async ({ golden, run: caseRun, fileName }) => {
    const rendered = await renderToText(arraySource(PLAYS, SESSIONS), caseRun);
    const path = join(DIR, golden);
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(path, rendered.text);
    expect(rendered.problems).toEqual([]);
    expect(rendered.fileName).toBe(fileName);
    expect(Buffer.from(rendered.text, 'utf8').equals(readFileSync(path))).toBe(true);
  });
});
