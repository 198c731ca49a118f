import { MARKS, REPORT_COLUMNS_VERSION, WRITTEN_FIELDS, recordingColumnsOf, writtenName, type RecordingNames, type WrittenField } from '../domain/recording';
import type { CorrectedPlay } from '../domain/correction';
import type { TrackFields } from '../domain/track';
import { correctionsByDbid, type CorrectionRow } from './corrections';
import type { PlayRange, PlayRow } from './plays';

// What a report asks of the play log where the plays are stored (docs/reports.md "Where the rows
// come from"): the month's counts, the plays that may have a problem, and the census totals per
// recording, each one query over the stored report columns (domain/recording.ts) instead of every
// play read into the process. Both backends answer the same rows, in the same order.

/** A report's range: music that aired less than `minAiredMs` is left out (0: nothing is). */
export interface ReportRange extends PlayRange {
  minAiredMs: number;
}

/** The plays of one kind on one channel. */
export interface PlaySummaryRow {
  kind: string;
  channel: string;
  plays: number;
  /** Music left out for its aired length. */
  short: number;
  /** Whether a reported play was trimmed. */
  trimmed: boolean;
  /** Plays whose report columns are missing or of an older version: refreshReportColumns first. */
  stale: number;
  /** Music plays with a name in capitals (MARKS.capitals), short ones too. */
  capitals: number;
}

/** Which plays the check pass reads: those that may have a problem (docs/reports.md "Checks"). */
export interface CandidateFilter {
  /** Plays with any of these MARKS (domain/recording.ts). */
  marks: number;
  /** Plays without a kept listener count (the census formats check their performances). */
  listenersMissing: boolean;
  /** Every play of a recording with a name in capitals (none need come when the summary counted no such play). */
  spellings: boolean;
}

/** A reported play that may have a problem, and the last valid end before it on its channel. */
export interface CheckCandidate {
  row: PlayRow;
  previous: { dbid: number; endedAt: string } | null;
}

/** One recording's census line: its names (docs/reports-us.md "SoundExchange") and its summed counts. */
export interface RecordingTotal {
  channel?: string;
  /** Each name from the recording's first play that has it, as written (the ISRC normalized). */
  names: Partial<Record<WrittenField, string>>;
  /** The kept listener counts summed; plays without one add nothing. */
  performances: number;
  listenerSeconds: number;
  plays: number;
  /** Ended plays without a kept count: theirs must be counted from the sessions. */
  uncounted: number;
}

export interface PlayReportQueries {
  /**
   * Computes the report columns of the range's plays written without them, or by an older
   * REPORT_COLUMNS_VERSION (another instance, or the rows before the migration); answers how many.
   */
  refreshReportColumns(range: PlayRange): Promise<number>;
  /** The range's plays counted by kind and channel; the other queries read the report columns as they are. */
  playSummary(range: ReportRange): Promise<PlaySummaryRow[]>;
  /** The reported plays the filter (or an overlap, or a name in capitals) picks, in air order, page by page. */
  checkCandidates(range: ReportRange, filter: CandidateFilter): AsyncIterable<readonly CheckCandidate[]>;
  /** The reported plays grouped by recording (and channel), in order of first play, page by page. */
  recordingTotals(range: ReportRange, byChannel: boolean): AsyncIterable<readonly RecordingTotal[]>;
  /**
   * playSummary() and recordingTotals() of the same range at once: SQLite answers both from one
   * scan of the range (docs/reports.md "Memory and speed"); recordings() is asked after summary.
   */
  reportTotals(range: ReportRange): Promise<ReportTotals>;
  /** The range's plays that were corrected (PATCH /v1/history/<dbid>), in air order, each with its corrections oldest first. */
  correctedPlays(range: PlayRange): Promise<CorrectedPlay[]>;
  /** The range's music plays that recognition made (docs/recognition.md "A recognised play"), in air order. */
  recognisedPlays(range: PlayRange): Promise<RecognisedPlay[]>;
}

/** The answers of PlayReportQueries.reportTotals. */
export interface ReportTotals {
  summary: PlaySummaryRow[];
  recordings(byChannel: boolean): AsyncIterable<readonly RecordingTotal[]>;
}

/** A play recognition made: its score and the playback rate it was found at (null: not recorded). */
export interface RecognisedPlay {
  dbid: number;
  score: number | null;
  rate: number | null;
}

/**
 * The recognised music plays of a range, in air order (both backends): `field(name)` is the
 * backend's read of a metadata field as text (SQLite json_extract, PostgreSQL ->>). The stored
 * mark sifts the plays first, so only theirs (and those of rows whose columns are outdated) have
 * their metadata read: SQLite's `tracks` names tracks_for_reports, where the rest never leave the index.
 */
export const recognisedPlaysSql = (p: readonly [string, string, string], field: (name: string) => string, tracks = 'tracks'): string =>
  `SELECT dbid, ${field('recognition_score')} AS score, ${field('recognition_rate')} AS rate FROM ${tracks}
    WHERE started_at >= ${p[0]} AND started_at < ${p[1]} AND (${p[2]} IS NULL OR channel = ${p[2]})
      AND kind = 'music' AND ((report_marks & ${MARKS.recognised}) <> 0 OR report_version IS DISTINCT FROM ${REPORT_COLUMNS_VERSION})
      AND ${field('recognition')} IS NOT NULL
    ORDER BY started_at, dbid`;

/** Pure: the rows of recognisedPlaysSql, numbers read from their text. */
export function recognisedPlaysOf(rows: readonly { dbid: number | string; score: unknown; rate: unknown }[]): RecognisedPlay[] {
  const number = (value: unknown): number | null => {
    const parsed = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    return Number.isFinite(parsed) ? parsed : null;
  };
  return rows.map((row) => ({ dbid: Number(row.dbid), score: number(row.score), rate: number(row.rate) }));
}

/** The audit rows of the corrected plays of a range, in air order (both backends; the table is migration 15 / 12). */
export const correctedPlaysSql = (p: readonly [string, string, string]): string =>
  `SELECT c.dbid, c.corrected_at, c.corrected_by, c.changes FROM play_corrections c JOIN tracks t ON t.dbid = c.dbid
    WHERE t.started_at >= ${p[0]} AND t.started_at < ${p[1]} AND (${p[2]} IS NULL OR t.channel = ${p[2]})
    ORDER BY t.started_at, t.dbid, c.id`;

/** Pure: audit rows in air order as corrected plays. */
export function correctedPlaysOf(rows: readonly CorrectionRow[]): CorrectedPlay[] {
  return [...correctionsByDbid(rows)].map(([dbid, corrections]) => ({ dbid, corrections }));
}

/** The stored report columns of a play, in their SQL order: recording_key, spelling_key, report_marks, report_version. */
export function reportColumnValues(metadata: TrackFields): [string, string, number, number] {
  const columns = recordingColumnsOf(metadata);
  return [columns.recordingKey, columns.spellingKey, columns.marks, REPORT_COLUMNS_VERSION];
}

/**
 * A play's place in air order as one text: `started_at`, a space, and 10^18 plus the dbid (19
 * digits, so texts compare as the pairs do; sums are cheaper than formatting in both backends).
 * The minimum of it over a group is the group's first play.
 */
export const airOrderSql = (table: string): string => `${table}.started_at || ' ' || (${table}.dbid + 1000000000000000000)`;

/** The dbid of an air-order text (airOrderSql), or null. */
export function dbidOfAirOrder(order: string | null): number | null {
  if (order === null) return null;
  return Number(order.slice(order.lastIndexOf(' ') + 2));
}

/** Which play each written name of a recording comes from: its dbid, or null when no play has it. */
export type NameSources = Record<WrittenField, number | null>;

/** The dbids whose metadata the names of these recordings come from. */
export function sourceDbids(sources: readonly NameSources[]): number[] {
  const wanted = new Set<number>();
  for (const source of sources) for (const field of WRITTEN_FIELDS) if (source[field] !== null) wanted.add(source[field]);
  return [...wanted];
}

/** The counts a backend's totals row carries, as both name the columns. */
export interface TotalCounts {
  channel: string | null;
  performances: number;
  listener_seconds: number;
  plays: number;
  uncounted: number;
}

/** Each row's totals with its names, from the names of the plays `sources` points at. */
export function namedTotals(
  rows: readonly TotalCounts[],
  sources: readonly NameSources[],
  namesOf: ReadonlyMap<number, RecordingNames>,
  byChannel: boolean,
): RecordingTotal[] {
  return rows.map((row, index) => {
    const total: RecordingTotal = {
      names: writtenNames(sources[index], namesOf),
      performances: row.performances,
      listenerSeconds: row.listener_seconds,
      plays: row.plays,
      uncounted: row.uncounted,
    };
    if (byChannel && row.channel !== null) total.channel = row.channel;
    return total;
  });
}

/** A recording's written names, each from the metadata of the play it comes from. */
function writtenNames(source: NameSources | undefined, metadataOf: ReadonlyMap<number, RecordingNames>): RecordingTotal['names'] {
  const written: RecordingTotal['names'] = {};
  for (const field of WRITTEN_FIELDS) {
    const dbid = source?.[field] ?? null;
    const names = dbid === null ? undefined : metadataOf.get(dbid);
    const value = names === undefined ? undefined : writtenName(names, field);
    if (value !== undefined) written[field] = value;
  }
  return written;
}

/** The name sources of a row with a `<field>_from` air-order text per written name. */
export function nameSourcesOf(row: Readonly<Record<`${WrittenField}_from`, string | null>>): NameSources {
  return {
    artist: dbidOfAirOrder(row.artist_from),
    title: dbidOfAirOrder(row.title_from),
    isrc: dbidOfAirOrder(row.isrc_from),
    album: dbidOfAirOrder(row.album_from),
    label: dbidOfAirOrder(row.label_from),
  };
}
