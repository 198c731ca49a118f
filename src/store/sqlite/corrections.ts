import type { CorrectionEntry, CorrectionOutcome } from '../../domain/correction';
import type { PlayKind, PlayUsage } from '../../domain/play';
import type { TrackFields, TrackRecord } from '../../domain/track';
import { correctionsByDbid, overlapSql, planCorrection, type CorrectionRow, type RecordCorrection } from '../corrections';
import { reportColumnValues } from '../play-reports';
import type { Db } from './database';

// SQLite's half of TrackStore.correct and of the records' corrections (store/corrections.ts):
// the check, the update and the audit row in one transaction (better-sqlite3's transactions are
// immediate in one process: no other write comes between the check and the update).

interface StoredRow {
  metadata: string;
  channel: string;
  started_at: string | null;
  received_at: string;
  ended_at: string | null;
  kind: string;
  usage: string;
}

export interface SqliteCorrections {
  /** The correction; `read` gives the record back as stored after it. */
  correct(dbid: number, correction: RecordCorrection, read: (dbid: number) => TrackRecord | null): CorrectionOutcome<TrackRecord>;
  /** The corrections of these records, oldest first. */
  of(dbids: readonly number[]): Map<number, CorrectionEntry[]>;
}

export function createSqliteCorrections(db: Db): SqliteCorrections {
  const stored = db.prepare<[number], StoredRow>('SELECT metadata, channel, started_at, received_at, ended_at, kind, usage FROM tracks WHERE dbid = ?');
  const overlap = db.prepare<{ channel: string; dbid: number; end: string | null; start: string }, { dbid: number }>(
    overlapSql(['@channel', '@dbid', '@end', '@start']),
  );
  const updateRow = db.prepare<
    {
      dbid: number;
      metadata: string;
      recording: string;
      spelling: string;
      marks: number;
      version: number;
      start: string;
      end: string | null;
      kind: string;
      usage: string;
      recount: number;
    },
    never
  >(
    `UPDATE tracks SET metadata = @metadata, recording_key = @recording, spelling_key = @spelling, report_marks = @marks, report_version = @version,
        started_at = @start, ended_at = @end, kind = @kind, usage = @usage,
        end_reason = CASE WHEN @end IS NULL THEN NULL ELSE coalesce(end_reason, 'explicit') END,
        listeners = CASE WHEN @recount = 1 THEN NULL ELSE listeners END,
        listeners_done = CASE WHEN @recount = 1 THEN 0 ELSE listeners_done END
      WHERE dbid = @dbid`,
  );
  const audit = db.prepare<[number, string, string, string], never>(
    'INSERT INTO play_corrections (dbid, corrected_at, corrected_by, changes) VALUES (?, ?, ?, ?)',
  );
  const entries = db.prepare<[string], CorrectionRow>(
    'SELECT dbid, corrected_at, corrected_by, changes FROM play_corrections WHERE dbid IN (SELECT value FROM json_each(?)) ORDER BY id',
  );

  const correct = db.transaction((dbid: number, correction: RecordCorrection, read: (dbid: number) => TrackRecord | null): CorrectionOutcome<TrackRecord> => {
    const row = stored.get(dbid);
    if (!row) return { kind: 'not found' };
    const play = { startedAt: row.started_at ?? row.received_at, endedAt: row.ended_at, kind: row.kind as PlayKind, usage: row.usage as PlayUsage };
    const planned = planCorrection({ metadata: JSON.parse(row.metadata) as TrackFields, play }, correction);
    if ('refused' in planned) return { kind: 'refused', message: planned.refused };
    if (planned.timesChanged) {
      const other = overlap.get({ channel: row.channel, dbid, end: planned.play.endedAt, start: planned.play.startedAt });
      if (other) return { kind: 'overlaps', dbid: other.dbid };
    }
    if (planned.entry) {
      const [recording, spelling, marks, version] = reportColumnValues(planned.metadata);
      updateRow.run({
        dbid,
        metadata: JSON.stringify(planned.metadata),
        recording,
        spelling,
        marks,
        version,
        start: planned.play.startedAt,
        end: planned.play.endedAt,
        kind: planned.play.kind,
        usage: planned.play.usage,
        recount: planned.timesChanged ? 1 : 0,
      });
      audit.run(dbid, planned.entry.at, planned.entry.by, JSON.stringify(planned.entry.changes));
    }
    const record = read(dbid);
    return record ? { kind: 'corrected', record, entry: planned.entry } : { kind: 'not found' };
  });

  return {
    correct: (dbid, correction, read) => correct(dbid, correction, read),
    of(dbids) {
      return dbids.length === 0 ? new Map() : correctionsByDbid(entries.all(JSON.stringify(dbids)));
    },
  };
}
