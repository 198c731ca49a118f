import { compactDate, fileSafe, type ReportFormat, type ReportInput, type ReportRun } from '../format';
import { clockOfSeconds, localParts, pad2, pad4 } from '../local-time';
import type { PlayUsage, ReportPlay } from '../rows';
import { normalizedIsrc } from '../../domain/recording';
import { airedSeconds } from '../selection';
import { fixedField, joinNames } from '../text-fields';
import { fileClock, type FileClock } from './local-stamp';

// BMI electronic music report, EMR (docs/reports-us.md "BMI"): fixed-width records ending in CRLF,
// a HEDR record, one FMDT record per play, a TRLR record with the number of records. BMI does not
// publish the layout; the widths and codes are those Rivendell's EMR export writes. The file is
// ASCII (names transliterated, text-fields.ts), so every width is a width in bytes too.

const CRLF = '\r\n';

/** Two-character usage codes. */
export const USAGE_CODES: Record<PlayUsage, string> = { feature: 'F1', theme: 'TT', background: 'B ' };

function stamp(ms: number, timeZone: string): { date: string; time: string } {
  const p = localParts(ms, timeZone);
  return { date: `${pad4(p.year)}${pad2(p.month)}${pad2(p.day)}`, time: `${pad2(p.hour)}${pad2(p.minute)}${pad2(p.second)}` };
}

/** HEDR: record type, `STA`, station id (25), creation date-time and date (22), `FMDT`, 51 spaces. */
export function headerRecord(run: ReportRun): string {
  const created = stamp(run.nowMs, run.settings.timeZone);
  return `HEDRSTA${fixedField(run.settings.service, 25)}${fixedField(`${created.date}${created.time}${created.date}`, 22)}FMDT${' '.repeat(51)}${CRLF}`;
}

/**
 * FMDT: station id (40), station type (2), format (25), first day of the report's month, air date
 * and time `YYYYMMDDhh:mm:ss`, a count of 000000001, title, artist and composer (40 each), length
 * `hh:mm:ss`, 11 spaces, ISRC right-aligned (12), usage code (2), 22 spaces.
 */
export function playRecord(run: ReportRun, play: ReportPlay, clock: FileClock = fileClock(run.range, run.settings.timeZone)): string {
  const { settings } = run;
  const aired = local(Date.parse(play.started_at), clock);
  return [
    'FMDT',
    fixedField(settings.service, 40),
    settings.stationType,
    fixedField(settings.stationFormat, 25),
    `${compactDate(run.range.from).slice(0, 6)}01`,
    fixedField(aired, 16),
    '000000001',
    fixedField(play.title, 40),
    fixedField(play.artist, 40),
    fixedField(joinNames(play.composers), 40),
    clockOfSeconds(airedSeconds(play) ?? play.duration ?? 0),
    ' '.repeat(11),
    fixedField(normalizedIsrc(play.isrc), 12, 'right'),
    USAGE_CODES[play.usage],
    ' '.repeat(22),
    CRLF,
  ].join('');
}

/** The air time on the file's clock: local, or standard time through a night the clocks go back (docs/reports.md). */
function local(ms: number, clock: FileClock): string {
  const p = clock(ms);
  return `${pad4(p.year)}${pad2(p.month)}${pad2(p.day)}${pad2(p.hour)}:${pad2(p.minute)}:${pad2(p.second)}`;
}

/** TRLR: the number of records in the file, this one included, in 12 digits, then 23 spaces. */
export const trailerRecord = (records: number): string => `TRLR${String(records).padStart(12, '0')}${' '.repeat(23)}${CRLF}`;

async function* render(input: ReportInput, run: ReportRun): AsyncGenerator<string> {
  yield headerRecord(run);
  let records = 1;
  const clock = fileClock(run.range, run.settings.timeZone);
  for await (const batch of input.plays()) {
    records += batch.length;
    yield batch.map((play) => playRecord(run, play, clock)).join('');
  }
  yield trailerRecord(records + 1);
}

export const bmi: ReportFormat = {
  name: 'bmi',
  contentType: () => 'text/plain; charset=us-ascii',
  needsPerformances: () => false,
  gathersBeforeWriting: () => false,
  asciiNames: ['title', 'artist', 'writers'],
  /** Rivendell's EMR documentation: `<station id><yy><mm>.emr`, of the report's first month; a one-channel file carries the channel after the id. */
  fileName(run) {
    const id = run.channel === undefined ? run.settings.service : `${run.settings.service}-${run.channel}`;
    return fileSafe(`${id}${compactDate(run.range.from).slice(2, 6)}.emr`);
  },
  render,
};
