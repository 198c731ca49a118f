import { correctedPlay, metadataChanges, type CorrectablePlay, type CorrectionEntry, type FieldChange, type PlayCorrection } from '../domain/correction';
import type { TrackFields } from '../domain/track';

// What both backends do with a correction (TrackStore.correct in tracks.ts; docs/http-api.md
// "`PATCH /v1/history/<dbid>`: correct a record"): the new row and its audit entry, computed from
// the stored row inside the backend's transaction. The backends add the one rule that needs the
// database: no other play on the channel overlaps the corrected one.

/** A correction as the pipeline hands it to the store. */
export interface RecordCorrection {
  /** The record's metadata after the correction; absent when only the play changes. */
  metadata?: TrackFields;
  play: PlayCorrection;
  /** When, ISO 8601 UTC with milliseconds. */
  at: string;
  /** Who asked (CorrectionEntry.by). */
  by: string;
}

export interface PlannedCorrection {
  metadata: TrackFields;
  play: CorrectablePlay;
  /** Whether the air times change: the play's listeners are counted again. */
  timesChanged: boolean;
  /** Null when nothing changes: no row is written and no entry kept. */
  entry: CorrectionEntry | null;
}

/** Pure: the stored row after the correction, or the reason it is refused. */
export function planCorrection(
  stored: { metadata: TrackFields; play: CorrectablePlay },
  correction: RecordCorrection,
): PlannedCorrection | { refused: string } {
  const played = correctedPlay(stored.play, correction.play);
  if ('refused' in played) return played;
  const metadata = correction.metadata ?? stored.metadata;
  const changes: Record<string, FieldChange> = { ...metadataChanges(stored.metadata, metadata), ...played.changes };
  const timesChanged = played.play.startedAt !== stored.play.startedAt || played.play.endedAt !== stored.play.endedAt;
  const entry = Object.keys(changes).length === 0 ? null : { at: correction.at, by: correction.by, changes };
  return { metadata, play: played.play, timesChanged, entry };
}

/** One audit row as both backends read it (SQLite: changes as JSON text). */
export interface CorrectionRow {
  dbid: number | string;
  corrected_at: string;
  corrected_by: string;
  changes: string | Record<string, FieldChange>;
}

/** Pure: audit rows (oldest first) grouped by dbid. */
export function correctionsByDbid(rows: readonly CorrectionRow[]): Map<number, CorrectionEntry[]> {
  const byDbid = new Map<number, CorrectionEntry[]>();
  for (const row of rows) {
    const dbid = Number(row.dbid);
    const changes = typeof row.changes === 'string' ? (JSON.parse(row.changes) as Record<string, FieldChange>) : row.changes;
    const list = byDbid.get(dbid) ?? [];
    list.push({ at: row.corrected_at, by: row.corrected_by, changes });
    byDbid.set(dbid, list);
  }
  return byDbid;
}

/** The SQL that names another play of the channel overlapping [start, end) (end null: on air); `?` or `$n` placeholders in this order: channel, dbid, end, start. */
export const overlapSql = (p: readonly [string, string, string, string]): string =>
  `SELECT dbid FROM tracks WHERE channel = ${p[0]} AND dbid <> ${p[1]} AND started_at IS NOT NULL
     AND (${p[2]} IS NULL OR started_at < ${p[2]}) AND (ended_at IS NULL OR ended_at > ${p[3]})
   ORDER BY started_at, dbid LIMIT 1`;
