import type { CorrectionEntry, CorrectionOutcome } from '../../domain/correction';
import type { PlayKind, PlayUsage } from '../../domain/play';
import type { TrackFields } from '../../domain/track';
import { correctionsByDbid, overlapSql, planCorrection, type CorrectionRow, type RecordCorrection } from '../corrections';
import { reportColumnValues } from '../play-reports';
import { inTransaction, type PostgresContext } from './connection';
import { announced } from './notifications';
import { lockChannel } from './plays';

// PostgreSQL's half of TrackStore.correct and of the records' corrections (store/corrections.ts):
// under the channel's lock (the one a new play's placing takes, plays.ts), so no play placed or
// corrected meanwhile can come to overlap; the update is announced to the other instances.

interface StoredRow {
  metadata: TrackFields;
  channel: string;
  started_at: string | null;
  received_at: string;
  ended_at: string | null;
  kind: string;
  usage: string;
}

const UPDATE_SQL = announced(
  'track',
  `UPDATE tracks SET metadata = $2::json, recording_key = $4, spelling_key = $5, report_marks = $6, report_version = $7,
      started_at = $8, ended_at = $9::text, kind = $10, usage = $11,
      end_reason = CASE WHEN $9::text IS NULL THEN NULL ELSE coalesce(end_reason, 'explicit') END,
      listeners = CASE WHEN $12::boolean THEN NULL ELSE listeners END,
      listeners_done = CASE WHEN $12::boolean THEN false ELSE listeners_done END
    WHERE dbid = $3`,
);

/** Corrects a record; answers 'corrected' with `record: null`, the caller reading it back after the commit. */
export async function correctPostgres({ pool, instanceId }: PostgresContext, dbid: number, correction: RecordCorrection): Promise<CorrectionOutcome<null>> {
  return inTransaction(pool, async (client) => {
    const place = (await client.query<{ channel: string }>('SELECT channel FROM tracks WHERE dbid = $1', [dbid])).rows[0];
    if (!place) return { kind: 'not found' };
    await lockChannel(client, place.channel);
    const row = (
      await client.query<StoredRow>('SELECT metadata, channel, started_at, received_at, ended_at, kind, usage FROM tracks WHERE dbid = $1 FOR UPDATE', [dbid])
    ).rows[0];
    if (!row) return { kind: 'not found' };
    const play = { startedAt: row.started_at ?? row.received_at, endedAt: row.ended_at, kind: row.kind as PlayKind, usage: row.usage as PlayUsage };
    const planned = planCorrection({ metadata: row.metadata, play }, correction);
    if ('refused' in planned) return { kind: 'refused', message: planned.refused };
    if (planned.timesChanged) {
      const other = await client.query<{ dbid: string }>(overlapSql(['$1', '$2', '$3::text', '$4::text']), [
        row.channel,
        dbid,
        planned.play.endedAt,
        planned.play.startedAt,
      ]);
      if (other.rows[0]) return { kind: 'overlaps', dbid: Number(other.rows[0].dbid) };
    }
    if (planned.entry) {
      await client.query(UPDATE_SQL, [
        instanceId,
        JSON.stringify(planned.metadata),
        dbid,
        ...reportColumnValues(planned.metadata),
        planned.play.startedAt,
        planned.play.endedAt,
        planned.play.kind,
        planned.play.usage,
        planned.timesChanged,
      ]);
      await client.query('INSERT INTO play_corrections (dbid, corrected_at, corrected_by, changes) VALUES ($1, $2, $3, $4::json)', [
        dbid,
        planned.entry.at,
        planned.entry.by,
        JSON.stringify(planned.entry.changes),
      ]);
    }
    return { kind: 'corrected', record: null, entry: planned.entry };
  });
}

/** The corrections of these records, oldest first. */
export async function postgresCorrectionsOf(pool: PostgresContext['pool'], dbids: readonly number[]): Promise<Map<number, CorrectionEntry[]>> {
  if (dbids.length === 0) return new Map();
  const rows = await pool.query<CorrectionRow>(
    'SELECT dbid, corrected_at, corrected_by, changes FROM play_corrections WHERE dbid = ANY($1::bigint[]) ORDER BY id',
    [dbids],
  );
  return correctionsByDbid(rows.rows);
}
