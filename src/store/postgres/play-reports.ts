import type { Queryable } from './connection';
import { MARKS, NAME_MARKS, REPORT_COLUMNS_VERSION, WRITTEN_FIELDS, recordingNamesOf, type WrittenField } from '../../domain/recording';
import { LONG_PLAY_SECONDS } from '../../domain/play';
import type { TrackFields } from '../../domain/track';
import type { CorrectionRow } from '../corrections';
import {
  airOrderSql,
  correctedPlaysOf,
  correctedPlaysSql,
  recognisedPlaysOf,
  recognisedPlaysSql,
  nameSourcesOf,
  reportColumnValues,
  sourceDbids,
  namedTotals,
  type PlayReportQueries,
  type RecordingTotal,
  type TotalCounts,
  type ReportRange,
} from '../play-reports';
import { PLAY_COLUMNS, PLAY_PAGE, playFromRow, type PlayColumns } from '../plays';

// The report queries of the PostgreSQL play log (store/play-reports.ts has the contract), the
// same rows in the same order as SQLite's (sqlite/play-reports.ts). Every statement takes the
// range as $1 from, $2 to, $3 the shortest aired ms (0: none), $4 the channel or null.

const REFRESH_BATCH = 500;

const airedMs = (t = '') => `round(extract(epoch FROM (${t}ended_at::timestamptz - ${t}started_at::timestamptz)) * 1000)`;
const AIRED_MS = airedMs();
const IN_RANGE = 'started_at >= $1 AND started_at < $2 AND ($4::text IS NULL OR channel = $4)';
/** Music that aired at least $3 ms (or has no end yet). */
const isReported = (t = '') => `${t}kind = 'music' AND ($3::double precision <= 0 OR ${t}ended_at IS NULL OR ${airedMs(t)} >= $3)`;
const REPORTED = `SELECT * FROM tracks WHERE ${IN_RANGE} AND ${isReported()}`;

const SUMMARY_SQL = `
  SELECT kind, channel, count(*)::integer AS plays, count(*) FILTER (WHERE short)::integer AS short, coalesce(bool_or(trimmed_seconds > 0 AND NOT short), false) AS trimmed,
         count(*) FILTER (WHERE report_version IS DISTINCT FROM $5)::integer AS stale,
         count(*) FILTER (WHERE kind = 'music' AND (report_marks & ${MARKS.capitals}) <> 0)::integer AS capitals
    FROM (SELECT kind, channel, trimmed_seconds, report_version, report_marks,
                 kind = 'music' AND $3::double precision > 0 AND ended_at IS NOT NULL AND ${AIRED_MS} < $3 AS short
            FROM tracks WHERE ${IN_RANGE}) play
   GROUP BY kind, channel ORDER BY kind COLLATE "C", channel COLLATE "C"`;

/**
 * $5 marks, $6 whether plays without a kept count are wanted, $7/$8 where the last page ended, $9
 * the page size, $10 whether the plays of recordings with a name in capitals are wanted. Sifted
 * as in SQLite: an overlap by the latest valid end before a play, the last valid play before each
 * kept one looked up by the channel's index.
 */
const CANDIDATES_SQL = `
  WITH play AS (SELECT dbid, started_at, ended_at, channel, listeners IS NULL AS uncounted, report_marks, spelling_key FROM (${REPORTED}) reported),
  sifted AS (
    SELECT play.*, max(CASE WHEN ended_at >= started_at THEN ended_at END)
             OVER (PARTITION BY channel ORDER BY started_at, dbid ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS latest_end
      FROM play
  ),
  kept AS (
    SELECT s.dbid, s.started_at,
           (SELECT p.dbid FROM tracks p
             WHERE p.channel = s.channel AND p.started_at >= $1 AND (p.started_at, p.dbid) < (s.started_at, s.dbid)
               AND p.ended_at >= p.started_at AND ${isReported('p.')}
             ORDER BY p.started_at DESC, p.dbid DESC LIMIT 1) AS previous_dbid
      FROM sifted s
     WHERE (s.started_at, s.dbid) > ($7::text COLLATE "C", $8::bigint)
       AND ((s.report_marks & $5) <> 0 OR s.ended_at IS NULL OR s.ended_at < s.started_at
        OR ${airedMs('s.')} > ${LONG_PLAY_SECONDS * 1000}
        OR ($6 AND s.uncounted) OR s.latest_end > s.started_at
        OR ($10 AND s.spelling_key IN (SELECT spelling_key FROM play WHERE (report_marks & ${MARKS.capitals}) <> 0)))
     ORDER BY s.started_at, s.dbid LIMIT $9
  )
  SELECT t.dbid, t.received_at, t.metadata, ${PLAY_COLUMNS.split(', ')
    .map((column) => `t.${column}`)
    .join(', ')}, p.dbid AS previous_dbid, p.ended_at AS previous_end
    FROM kept JOIN tracks t ON t.dbid = kept.dbid LEFT JOIN tracks p ON p.dbid = kept.previous_dbid
   ORDER BY kept.started_at, kept.dbid`;

const totalsSql = (byChannel: boolean) => `
  SELECT ${byChannel ? 'channel' : 'NULL AS channel'}, min(${airOrderSql('play')}) AS first,
         ${WRITTEN_FIELDS.map((field) => `min(${airOrderSql('play')}) FILTER (WHERE (report_marks & ${NAME_MARKS[field]}) <> 0) AS ${field}_from`).join(', ')},
         coalesce(sum((listeners ->> 'atp')::double precision), 0) AS performances,
         coalesce(sum((listeners ->> 'listener_seconds')::double precision), 0) AS listener_seconds,
         count(*)::integer AS plays, count(*) FILTER (WHERE listeners IS NULL AND ended_at IS NOT NULL)::integer AS uncounted
    FROM (${REPORTED}) play
   GROUP BY ${byChannel ? 'channel, ' : ''}recording_key ORDER BY first`;

interface CandidateRow extends PlayColumns {
  dbid: string;
  received_at: string;
  metadata: TrackFields;
  previous_dbid: string | null;
  previous_end: string | null;
}

type TotalRow = TotalCounts & { first: string } & Record<`${WrittenField}_from`, string | null>;

const rangeValues = (range: ReportRange): unknown[] => [range.from, range.to, range.minAiredMs, range.channel ?? null];

export function createPostgresPlayReports(pool: Queryable): PlayReportQueries {
  const correctedPlays: PlayReportQueries['correctedPlays'] = async (range) =>
    correctedPlaysOf((await pool.query<CorrectionRow>(correctedPlaysSql(['$1', '$2', '$3::text']), [range.from, range.to, range.channel ?? null])).rows);
  const recognisedPlays: PlayReportQueries['recognisedPlays'] = async (range) =>
    recognisedPlaysOf(
      (
        await pool.query<{ dbid: string; score: unknown; rate: unknown }>(
          recognisedPlaysSql(['$1', '$2', '$3::text'], (name) => `(metadata->>'${name}')`),
          [range.from, range.to, range.channel ?? null],
        )
      ).rows,
    );
  /** The names of a page of recordings, each from the first play that has it. */
  async function named(rows: readonly TotalRow[], byChannel: boolean): Promise<RecordingTotal[]> {
    const sources = rows.map(nameSourcesOf);
    const found = await pool.query<{ dbid: string; metadata: TrackFields }>('SELECT dbid, metadata FROM tracks WHERE dbid = ANY($1::bigint[])', [
      sourceDbids(sources),
    ]);
    const names = new Map(found.rows.map((row) => [Number(row.dbid), recordingNamesOf(row.metadata)]));
    return namedTotals(rows, sources, names, byChannel);
  }

  async function refreshBatch(from: string, to: string): Promise<number> {
    const stale = await pool.query<{ dbid: string; metadata: TrackFields }>(
      'SELECT dbid, metadata FROM tracks WHERE started_at >= $1 AND started_at < $2 AND report_version IS DISTINCT FROM $3 LIMIT $4',
      [from, to, REPORT_COLUMNS_VERSION, REFRESH_BATCH],
    );
    if (stale.rows.length === 0) return 0;
    const columns = stale.rows.map((row) => reportColumnValues(row.metadata));
    await pool.query(
      `UPDATE tracks t SET recording_key = u.recording_key, spelling_key = u.spelling_key, report_marks = u.report_marks, report_version = $5
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::integer[]) AS u(dbid, recording_key, spelling_key, report_marks)
        WHERE t.dbid = u.dbid`,
      [stale.rows.map((row) => row.dbid), columns.map((c) => c[0]), columns.map((c) => c[1]), columns.map((c) => c[2]), REPORT_COLUMNS_VERSION],
    );
    return stale.rows.length;
  }

  const queries: PlayReportQueries = {
    correctedPlays,
    recognisedPlays,
    async reportTotals(range) {
      // Two queries, as before: the one scan is SQLite's (its GROUP BY sorts the range each time); not measured here.
      return { summary: await queries.playSummary(range), recordings: (byChannel) => queries.recordingTotals(range, byChannel) };
    },
    async refreshReportColumns(range) {
      let refreshed = 0;
      for (let batch = await refreshBatch(range.from, range.to); batch > 0; batch = await refreshBatch(range.from, range.to)) refreshed += batch;
      return refreshed;
    },
    async playSummary(range) {
      const result = await pool.query<{ kind: string; channel: string; plays: number; short: number; trimmed: boolean; stale: number; capitals: number }>(
        SUMMARY_SQL,
        [...rangeValues(range), REPORT_COLUMNS_VERSION],
      );
      return result.rows;
    },
    async *checkCandidates(range, filter) {
      let after: [string, number] = ['', 0];
      for (;;) {
        const result = await pool.query<CandidateRow>(CANDIDATES_SQL, [
          ...rangeValues(range),
          filter.marks,
          filter.listenersMissing,
          after[0],
          after[1],
          PLAY_PAGE,
          filter.spellings,
        ]);
        const rows = result.rows;
        if (rows.length > 0)
          yield rows.map((row) => ({
            row: { dbid: Number(row.dbid), receivedAt: row.received_at, metadata: row.metadata, play: playFromRow(row, row.received_at) },
            previous: row.previous_dbid === null || row.previous_end === null ? null : { dbid: Number(row.previous_dbid), endedAt: row.previous_end },
          }));
        const last = rows.at(-1);
        if (!last || rows.length < PLAY_PAGE) return;
        after = [last.started_at ?? '', Number(last.dbid)];
      }
    },
    async *recordingTotals(range, byChannel) {
      // One row per recording: the census holds as many (docs/reports.md "Memory and speed").
      const result = await pool.query<TotalRow>(totalsSql(byChannel), rangeValues(range));
      for (let start = 0; start < result.rows.length; start += PLAY_PAGE) yield await named(result.rows.slice(start, start + PLAY_PAGE), byChannel);
    },
  };
  return queries;
}
