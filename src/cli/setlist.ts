import { parseIsoDateTime } from '../domain/iso-time';
import { recognitionLabel, recognitionOf } from '../domain/recognised';
import { trackLineParts, type TrackObject } from '../domain/template';

// The setlist formats of `svc history` (docs/decisions.md "History"). Pure: no I/O; the clock and
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

/**
 * `HH:MM  Artist - Title` in the local time of the process; `YYYY-MM-DD HH:MM  Artist - Title`
 * when the setlist spans days (`withDate`, see spansDays); a play recognition made ends in
 * `  [recognised 0.953]` (docs/recognition.md "A recognised play").
 */
export function setlistLine(track: TrackObject, withDate = false): string {
  const { head } = trackLineParts(track);
  const recognised = recognitionOf(track);
  const mark = recognised ? `  [${recognitionLabel(recognised.score, recognised.rate)}]` : '';
  return `${localClock(track.received_at, withDate)}  ${head || `untitled #${String(track.dbid)}`}${mark}`;
}

/** Whether two received times fall on different local days. */
export function spansDays(oldest: unknown, newest: unknown): boolean {
  const day = localDay(oldest);
  return day !== '' && localDay(newest) !== '' && day !== localDay(newest);
}

const two = (n: number) => String(n).padStart(2, '0');

function parseReceived(receivedAt: unknown): Date {
  return typeof receivedAt === 'string' ? new Date(receivedAt) : new Date(NaN);
}

function localDay(receivedAt: unknown): string {
  const at = parseReceived(receivedAt);
  return Number.isNaN(at.getTime()) ? '' : `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())}`;
}

function localClock(receivedAt: unknown, withDate: boolean): string {
  const at = parseReceived(receivedAt);
  if (Number.isNaN(at.getTime())) return withDate ? '---------- --:--' : '--:--';
  const time = `${two(at.getHours())}:${two(at.getMinutes())}`;
  return withDate ? `${localDay(receivedAt)} ${time}` : time;
}

/** The setlist's columns, then the play log's (docs/play-log.md): air times, kind, channel, people, listeners. */
export const CSV_COLUMNS = [
  'received_at',
  'artist',
  'title',
  'album',
  'label',
  'date',
  'isrc',
  'duration',
  'started_at',
  'ended_at',
  'end_reason',
  'kind',
  'usage',
  'channel',
  'dj',
  'show',
  'atp',
  'listener_seconds',
  'peak',
] as const;

/** Columns read from the play's `listeners` object. */
const LISTENER_COLUMNS: ReadonlySet<string> = new Set(['atp', 'listener_seconds', 'peak']);

/** One RFC 4180 record, without its CRLF. Lists (What's Now Playing sends `isrc` as one) join with "; ". */
function csvRecord(values: readonly unknown[]): string {
  return values.map((value) => csvField(csvText(value))).join(',');
}

export function csvRow(track: TrackObject): string {
  const listeners = track.listeners;
  const counts = typeof listeners === 'object' && listeners !== null ? (listeners as Readonly<Record<string, unknown>>) : {};
  return csvRecord(CSV_COLUMNS.map((column) => (LISTENER_COLUMNS.has(column) ? counts[column] : track[column])));
}

function csvText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(csvText).filter(Boolean).join('; ');
  return JSON.stringify(value);
}

/**
 * One CSV cell. Control characters other than tab and line breaks go (they would drive a
 * terminal). A cell that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab or CR
 * first: OWASP "CSV Injection") gets a leading `'`, which spreadsheets show as text. Then RFC
 * 4180 section 2: a field with a comma, a quote or a line break is quoted, its quotes doubled.
 */
function csvField(value: string): string {
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  let text = value.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g, '');
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
