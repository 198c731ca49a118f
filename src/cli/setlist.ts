import { parseIsoDateTime } from '../domain/iso-time';
import { trackLineParts, type TrackObject } from '../domain/template';

// The setlist formats of `svc history` (decisions.md "History"). Pure: no I/O; the clock and
// the time zone come from the caller (the process's TZ for the local time).

const DURATION = /^(\d{1,6})(s|m|h|d|w)$/;
const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * `--since`/`--until`: an ISO 8601 date-time (local time when it names no offset) or a span
 * back from `now` such as `90m`, `2h`, `1d`. Undefined when it is neither.
 */
export function parseWhen(value: string, now: Date): string | undefined {
  const span = DURATION.exec(value.trim());
  if (span) return new Date(now.getTime() - Number(span[1]) * UNIT_MS[span[2]]).toISOString();
  return parseIsoDateTime(value.trim(), 'local');
}

/** `HH:MM  Artist - Title` in the local time of the process. */
export function setlistLine(track: TrackObject): string {
  const { head } = trackLineParts(track);
  return `${localClock(track.received_at)}  ${head || `untitled #${String(track.dbid)}`}`;
}

function localClock(receivedAt: unknown): string {
  const at = typeof receivedAt === 'string' ? new Date(receivedAt) : new Date(NaN);
  if (Number.isNaN(at.getTime())) return '--:--';
  return `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
}

export const CSV_COLUMNS = ['received_at', 'artist', 'title', 'album', 'label', 'date', 'isrc', 'duration'] as const;

/** One RFC 4180 record, without its CRLF. Lists (What's Now Playing sends `isrc` as one) join with "; ". */
function csvRecord(values: readonly unknown[]): string {
  return values.map((value) => csvField(csvText(value))).join(',');
}

export function csvRow(track: TrackObject): string {
  return csvRecord(CSV_COLUMNS.map((column) => track[column]));
}

function csvText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(csvText).filter(Boolean).join('; ');
  return JSON.stringify(value);
}

/** RFC 4180 section 2: a field with a comma, a quote or a line break is quoted, its quotes doubled. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
