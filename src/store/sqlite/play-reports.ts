/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import { MARKS, NAME_MARKS, REPORT_COLUMNS_VERSION, WRITTEN_FIELDS, recordingNamesOf, type RecordingNames, type WrittenField } from '../../domain/recording';
import { LONG_PLAY_SECONDS } from '../../domain/play';
import type { TrackFields } from '../../domain/track';
import type { CorrectionRow } from '../corrections';
import {
  airOrderSql,
  correctedPlaysOf,
  correctedPlaysSql,
  recognisedPlaysOf,
  recognisedPlaysSql,
  dbidOfAirOrder,
  nameSourcesOf,
  reportColumnValues,
  sourceDbids,
  namedTotals,
  type NameSources,
  type PlayReportQueries,
  type PlaySummaryRow,
  type RecordingTotal,
  type TotalCounts,
  type ReportRange,
} from '../play-reports';
import { PLAY_COLUMNS, PLAY_PAGE, playFromRow, type PlayColumns, type PlayRange } from '../plays';
import type { Db } from './database';

// The report queries of the SQLite play log (store/play-reports.ts has the contract). Each reads
// the range from tracks_for_reports (migration 14); the statements differ by their channel filter
// and grouping only.

const REFRESH_BATCH = 500;

/** The plays that started in [:from, :to), of :channel when the statement has one. */
const inRange = (channel: boolean, t = '') => `${t}started_at >= :from AND ${t}started_at < :to ${channel ? `AND ${t}channel = :channel` : ''}`;
/** Aired less than :minMs (when it ended); julianday's error is far below the millisecond it rounds to. */
const short = (t: string) => `round((julianday(${t}ended_at) - julianday(${t}started_at)) * 86400000) < :minMs`;
/** Reported: music that aired at least :minMs, or has no end yet (exclusionOf in src/reports/selection.ts). */
const isReported = (t = '') => `${t}kind = 'music' AND (:minMs <= 0 OR ${t}ended_at IS NULL OR NOT ${short(t)})`;
const reported = (channel: boolean) => `SELECT * FROM tracks WHERE ${inRange(channel)} AND ${isReported()}`;

/** 1 for music that aired less than :minMs; the CASE keeps SQLite from reading the times of the rest. */
const SHORT_MUSIC = `CASE WHEN :minMs > 0 AND kind = 'music' AND ended_at IS NOT NULL THEN CASE WHEN ${short('')} THEN 1 ELSE 0 END ELSE 0 END`;

/**
 * The reported plays the filter keeps, in air order, a page after (:afterStart, :afterDbid). An
 * overlap is sifted by each valid play's own span: the plays of its channel that start inside it
 * (one seek of tracks_by_channel_start per play, no sort of the month as a window would need);
 * the last valid play before each kept one is looked up by the same index.
 */
const candidatesSql = (channel: boolean) => `
  WITH play AS (SELECT dbid, started_at, ended_at, channel, listeners IS NULL AS uncounted, report_marks, spelling_key FROM tracks
                 WHERE ${inRange(channel)} AND ${isReported()}),
  overlapped AS (
    SELECT s.dbid FROM tracks p JOIN tracks s INDEXED BY tracks_by_channel_start
        ON s.channel = p.channel AND s.started_at >= p.started_at AND s.started_at < p.ended_at AND (s.started_at > p.started_at OR s.dbid > p.dbid)
     WHERE ${inRange(channel, 'p.')} AND p.ended_at >= p.started_at AND ${isReported('p.')}
  ),
  kept AS (
    SELECT s.dbid, s.started_at,
           (SELECT p.dbid FROM tracks p
             WHERE p.channel = s.channel AND p.started_at >= :from AND (p.started_at, p.dbid) < (s.started_at, s.dbid)
               AND p.ended_at >= p.started_at AND ${isReported('p.')}
             ORDER BY p.started_at DESC, p.dbid DESC LIMIT 1) AS previous_dbid
      FROM play s
     WHERE (s.started_at, s.dbid) > (:afterStart, :afterDbid)
       AND ((s.report_marks & :marks) != 0 OR s.ended_at IS NULL OR s.ended_at < s.started_at
        OR (julianday(s.ended_at) - julianday(s.started_at)) * 86400 > ${LONG_PLAY_SECONDS}
        OR (:listenersMissing AND s.uncounted) OR s.dbid IN (SELECT dbid FROM overlapped)
        OR (:spellings AND s.spelling_key IN (SELECT spelling_key FROM play WHERE report_marks & ${MARKS.capitals})))
     ORDER BY s.started_at, s.dbid LIMIT :limit
  )
  SELECT t.dbid, t.received_at, t.metadata, ${PLAY_COLUMNS.split(', ')
    .map((column) => `t.${column}`)
    .join(', ')}, p.dbid AS previous_dbid, p.ended_at AS previous_end
    FROM kept JOIN tracks t ON t.dbid = kept.dbid LEFT JOIN tracks p ON p.dbid = kept.previous_dbid
   ORDER BY kept.started_at, kept.dbid`;

/**
 * The range in one scan, for the summary and the census totals at once: per recording, channel,
 * kind and whether it is short music, the counts of both. The recording's first play there and
 * its marks (SQLite gives a bare column the value of the row a lone min() picked), and the kept
 * counts summed; read from tracks_for_reports alone.
 */
const scanSql = (channel: boolean) => `
  SELECT recording_key, channel, kind, ${SHORT_MUSIC} AS short, count(*) AS plays, sum(trimmed_seconds > 0) AS trimmed,
         sum(report_version IS NOT :version) AS stale, sum((report_marks & ${MARKS.capitals}) != 0) AS capitals,
         min(${airOrderSql('tracks')}) AS first, report_marks AS first_marks,
         coalesce(sum(listeners ->> 'atp'), 0) AS performances, coalesce(sum(listeners ->> 'listener_seconds'), 0) AS listener_seconds,
         sum(listeners IS NULL AND ended_at IS NOT NULL) AS uncounted
    FROM tracks INDEXED BY tracks_for_reports WHERE ${inRange(channel)}
   GROUP BY recording_key, channel, kind, short`;

/** A row of scanSql: the plays of one recording, channel, kind and shortness. */
interface ScanRow extends TotalRow {
  channel: string;
  kind: string;
  short: number;
  trimmed: number;
  stale: number;
  capitals: number;
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Pure: the summary (PlayReportQueries.playSummary) of the scan's rows, by kind then channel. */
function summaryOfScan(rows: readonly ScanRow[]): PlaySummaryRow[] {
  const groups = new Map<string, PlaySummaryRow>();
  for (const row of rows) {
    const key = `${row.kind}\u0000${row.channel}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { kind: row.kind, channel: row.channel, plays: 0, short: 0, trimmed: false, stale: 0, capitals: 0 };
      groups.set(key, group);
    }
    group.plays += row.plays;
    group.stale += row.stale;
    if (row.short === 1) group.short += row.plays;
    else if (row.trimmed > 0) group.trimmed = true;
    if (row.kind === 'music') group.capitals += row.capitals;
  }
  return [...groups.values()].sort((a, b) => byText(a.kind, b.kind) || byText(a.channel, b.channel));
}

/** Pure: the census totals of the scan's reported rows, per recording (and channel), in order of first play. */
function totalsOfScan(rows: readonly ScanRow[], byChannel: boolean): TotalRow[] {
  const totals = new Map<string, TotalRow>();
  for (const row of rows) {
    if (row.kind !== 'music' || row.short === 1) continue;
    const key = byChannel ? groupOf(row) : row.recording_key;
    const total = totals.get(key);
    if (total === undefined) {
      const { recording_key, first, first_marks, performances, listener_seconds, plays, uncounted } = row;
      totals.set(key, { channel: byChannel ? row.channel : null, recording_key, first, first_marks, performances, listener_seconds, plays, uncounted });
      continue;
    }
    if (row.first < total.first) [total.first, total.first_marks] = [row.first, row.first_marks];
    total.performances += row.performances;
    total.listener_seconds += row.listener_seconds;
    total.plays += row.plays;
    total.uncounted += row.uncounted;
  }
  return [...totals.values()].sort((a, b) => byText(a.first, b.first));
}

/** For the recordings in :keys (a JSON array) whose first play lacks a name: the first play that has each. */
const nameSourcesSql = (channel: boolean, byChannel: boolean) => `
  SELECT ${byChannel ? 'channel' : 'NULL AS channel'}, recording_key,
         ${WRITTEN_FIELDS.map((field) => `min(CASE WHEN report_marks & ${NAME_MARKS[field]} THEN ${airOrderSql('play')} END) AS ${field}_from`).join(', ')}
    FROM (${reported(channel)}) play
   WHERE recording_key IN (SELECT value FROM json_each(:keys))
   GROUP BY ${byChannel ? 'channel, ' : ''}recording_key`;

const ALL_NAMES = WRITTEN_FIELDS.reduce((marks, field) => marks | NAME_MARKS[field], 0);

interface CandidateRow extends PlayColumns {
  dbid: number;
  received_at: string;
  metadata: string;
  previous_dbid: number | null;
  previous_end: string | null;
}

interface TotalRow extends TotalCounts {
  recording_key: string;
  first: string;
  first_marks: number;
}

type NameSourceRow = { channel: string | null; recording_key: string } & Record<`${WrittenField}_from`, string | null>;

const groupOf = (row: { channel: string | null; recording_key: string }) => `${row.channel ?? ''}\u0000${row.recording_key}`;

const params = (range: ReportRange) => ({
  from: range.from,
  to: range.to,
  minMs: range.minAiredMs,
  ...(range.channel === undefined ? {} : { channel: range.channel }),
});

/**
 * A statement prepared on its first use: a report's reader (report-snapshot.ts) is opened for the
 * first report after start-up, which needs a few of these statements (one of each channel variant).
 */
const once = <T>(make: () => T): (() => T) => {
  let made: T | undefined;
  return () => (made ??= make());
};

const byChannel = <T>(make: (channel: boolean) => T): ((channel: string | undefined) => T) => {
  const [all, one] = [once(() => make(false)), once(() => make(true))];
  return (channel) => (channel === undefined ? all() : one());
};

/** One batch of computing the report columns of rows that lack them, as one transaction: answers how many. */
function createRefreshBatch(db: Db): (range: PlayRange) => number {
  const stale = once(() =>
    db.prepare<[string, string, number, number], { dbid: number; metadata: string }>(
      'SELECT dbid, metadata FROM tracks WHERE started_at >= ? AND started_at < ? AND report_version IS NOT ? LIMIT ?',
    ),
  );
  const setColumns = once(() =>
    db.prepare<[string, string, number, number, number], never>(
      'UPDATE tracks SET recording_key = ?, spelling_key = ?, report_marks = ?, report_version = ? WHERE dbid = ?',
    ),
  );
  return db.transaction((range: PlayRange): number => {
    const rows = stale().all(range.from, range.to, REPORT_COLUMNS_VERSION, REFRESH_BATCH);
    for (const row of rows) setColumns().run(...reportColumnValues(JSON.parse(row.metadata) as TrackFields), row.dbid);
    return rows.length;
  });
}

/** The census totals of a page of recordings with their names, each from the first play that has it. */
function createNamer(db: Db): (rows: readonly TotalRow[], range: ReportRange, grouped: boolean) => RecordingTotal[] {
  const sourcesAll = byChannel((channel) => db.prepare<Record<string, unknown>, NameSourceRow>(nameSourcesSql(channel, false)));
  const sourcesByChannel = byChannel((channel) => db.prepare<Record<string, unknown>, NameSourceRow>(nameSourcesSql(channel, true)));
  const metadataOf = once(() =>
    db.prepare<[string], { dbid: number; metadata: string }>('SELECT dbid, metadata FROM tracks WHERE dbid IN (SELECT value FROM json_each(?))'),
  );
  return (rows, range, grouped) => {
    const sources = rows.map((row): NameSources => {
      const first = dbidOfAirOrder(row.first);
      return { artist: first, title: first, isrc: first, album: first, label: first };
    });
    const lacking = rows.filter((row) => (row.first_marks & ALL_NAMES) !== ALL_NAMES);
    if (lacking.length > 0) {
      const statement = (grouped ? sourcesByChannel : sourcesAll)(range.channel);
      const found = new Map(
        statement.all({ ...params(range), keys: JSON.stringify(lacking.map((row) => row.recording_key)) }).map((row) => [groupOf(row), row]),
      );
      rows.forEach((row, index) => {
        const from = found.get(groupOf(row));
        if (from !== undefined) sources[index] = nameSourcesOf(from);
      });
    }
    const names = new Map<number, RecordingNames>();
    for (const row of metadataOf().all(JSON.stringify(sourceDbids(sources)))) names.set(row.dbid, recordingNamesOf(JSON.parse(row.metadata) as TrackFields));
    return namedTotals(rows, sources, names, grouped);
  };
}

export function createSqlitePlayReports(db: Db): PlayReportQueries {
  const refreshBatch = createRefreshBatch(db);
  const named = createNamer(db);
  const scan = byChannel((channel) => db.prepare<Record<string, unknown>, ScanRow>(scanSql(channel)));
  const candidates = byChannel((channel) => db.prepare<Record<string, unknown>, CandidateRow>(candidatesSql(channel)));
  const corrected = once(() =>
    db.prepare<{ from: string; to: string; channel: string | null }, CorrectionRow>(correctedPlaysSql(['@from', '@to', '@channel'])),
  );
  const recognised = once(() =>
    db.prepare<{ from: string; to: string; channel: string | null }, { dbid: number; score: unknown; rate: unknown }>(
      recognisedPlaysSql(['@from', '@to', '@channel'], (name) => `json_extract(metadata, '$.${name}')`, 'tracks INDEXED BY tracks_for_reports'),
    ),
  );

  const queries: PlayReportQueries = {
    async correctedPlays(range) {
      return correctedPlaysOf(corrected().all({ from: range.from, to: range.to, channel: range.channel ?? null }));
    },
    async recognisedPlays(range) {
      return recognisedPlaysOf(recognised().all({ from: range.from, to: range.to, channel: range.channel ?? null }));
    },
    async refreshReportColumns(range) {
      let refreshed = 0;
      for (let batch = refreshBatch(range); batch > 0; batch = refreshBatch(range)) {
        refreshed += batch;
        // A year of rows from before the columns is hundreds of batches: the server answers between them.
        await new Promise((resolve) => setImmediate(resolve));
      }
      return refreshed;
    },
    async playSummary(range) {
      return (await queries.reportTotals(range)).summary;
    },
    async reportTotals(range) {
      const rows = scan(range.channel).all({ ...params(range), version: REPORT_COLUMNS_VERSION });
      return {
        summary: summaryOfScan(rows),
        async *recordings(grouped) {
          // One row per recording: the census holds as many (docs/reports.md "Memory and speed").
          const totals = totalsOfScan(rows, grouped);
          for (let start = 0; start < totals.length; start += PLAY_PAGE) yield named(totals.slice(start, start + PLAY_PAGE), range, grouped);
        },
      };
    },
    async *checkCandidates(range, filter) {
      // A clean month has none; each further page runs the query again from where the last ended.
      const fixed = {
        ...params(range),
        marks: filter.marks,
        listenersMissing: filter.listenersMissing ? 1 : 0,
        spellings: filter.spellings ? 1 : 0,
        limit: PLAY_PAGE,
      };
      let after: [string, number] = ['', 0];
      for (;;) {
        const rows = candidates(range.channel).all({ ...fixed, afterStart: after[0], afterDbid: after[1] });
        if (rows.length > 0)
          yield rows.map((row) => ({
            row: { dbid: row.dbid, receivedAt: row.received_at, metadata: JSON.parse(row.metadata) as TrackFields, play: playFromRow(row, row.received_at) },
            previous: row.previous_dbid === null || row.previous_end === null ? null : { dbid: row.previous_dbid, endedAt: row.previous_end },
          }));
        const last = rows.at(-1);
        if (!last || rows.length < PLAY_PAGE) return;
        after = [last.started_at ?? '', last.dbid];
      }
    },
    async *recordingTotals(range, grouped) {
      yield* (await queries.reportTotals(range)).recordings(grouped);
    },
  };
  return queries;
}
