import { compactDate, fileSafe, type ReportFormat, type ReportInput, type ReportRun } from '../format';
import { clockOfSeconds, localParts, pad2, pad4 } from '../local-time';
import type { PlayUsage, ReportPlay } from '../rows';
import { normalizedIsrc } from '../../domain/recording';
import { airedSeconds } from '../selection';
import { fixedField, joinNames } from '../text-fields';

// BMI electronic music report, EMR (docs/reports-us.md "BMI"): fixed-width records ending in CRLF,
// a HEDR record, one FMDT record per play, a TRLR record with the number of records. BMI does not
// publish the layout; the widths and codes are those Rivendell's EMR export writes. Widths count
// characters, as Rivendell's do, so a line of non-Latin names is longer in bytes.

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
export function playRecord(run: ReportRun, play: ReportPlay): string {
  const { settings } = run;
  const aired = local(Date.parse(play.started_at), settings.timeZone);
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

function local(ms: number, timeZone: string): string {
  const p = localParts(ms, timeZone);
  return `${pad4(p.year)}${pad2(p.month)}${pad2(p.day)}${pad2(p.hour)}:${pad2(p.minute)}:${pad2(p.second)}`;
}

/** TRLR: the number of records in the file, this one included, in 12 digits, then 23 spaces. */
export const trailerRecord = (records: number): string => `TRLR${String(records).padStart(12, '0')}${' '.repeat(23)}${CRLF}`;

async function* render(input: ReportInput, run: ReportRun): AsyncGenerator<string> {
  yield headerRecord(run);
  let records = 1;
  for await (const batch of input.plays()) {
    records += batch.length;
    yield batch.map((play) => playRecord(run, play)).join('');
  }
  yield trailerRecord(records + 1);
}

export const bmi: ReportFormat = {
  name: 'bmi',
  contentType: () => 'text/plain; charset=utf-8',
  needsPerformances: () => false,
  gathersBeforeWriting: () => false,
  fileName(run) {
    return fileSafe(`${run.settings.service}-bmi-${compactDate(run.range.from)}-${compactDate(run.range.to)}.txt`);
  },
  render,
};
