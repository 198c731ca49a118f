import type { ReportRange } from '../format';
import { localParts, pad2, pad4, type LocalParts } from '../local-time';

// The date-time spellings the files use, from an instant and the file's clock. Pure.

/** Wall-clock fields of an instant as a file writes them. */
export type FileClock = (ms: number) => LocalParts;

const SAMPLE_MS = 3_600_000;

/** The zone's offset from UTC at an instant, in ms. */
function offsetAt(ms: number, timeZone: string): number {
  const p = localParts(ms, timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(ms / 1000) * 1000;
}

/**
 * The clock of a file with local times (docs/reports.md "Dates and time zones"): the station's
 * local time, unless the range holds a night when the clocks go back; then the whole file is in
 * the zone's standard time (its smallest offset in the range), so that no time goes backwards and
 * no two plays share a wall-clock hour. Sampled hourly: every DST change falls on an hour.
 */
export function fileClock(range: Pick<ReportRange, 'startMs' | 'endMs'>, timeZone: string): FileClock {
  let previous = offsetAt(range.startMs, timeZone);
  let smallest = previous;
  let goesBack = false;
  for (let ms = range.startMs + SAMPLE_MS; ms <= range.endMs; ms += SAMPLE_MS) {
    const offset = offsetAt(ms, timeZone);
    if (offset < previous) goesBack = true;
    smallest = Math.min(smallest, offset);
    previous = offset;
  }
  if (!goesBack) return (ms) => localParts(ms, timeZone);
  return (ms) => localParts(ms + smallest, 'UTC');
}

/** NPR/DS playlist: `MM/DD/YYYY HH:MM:SS`, to the second. */
export function nprLocalTime(ms: number, clock: FileClock): string {
  const p = clock(ms);
  return `${pad2(p.month)}/${pad2(p.day)}/${pad4(p.year)} ${pad2(p.hour)}:${pad2(p.minute)}:${pad2(p.second)}`;
}

/** `YYYY-MM-DD` and `HH:MM:SS` in UTC. */
export function utcDateAndTime(ms: number): [string, string] {
  const iso = new Date(ms).toISOString();
  return [iso.slice(0, 10), iso.slice(11, 19)];
}
