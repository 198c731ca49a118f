import Database from 'better-sqlite3';
import { reportReadsOf, type ReportReads, type ReportSnapshot, type ReportSnapshots } from '../report-snapshot';
import type { Db } from './database';
import { createSqlitePlayReports } from './play-reports';
import { sqlitePlayPages } from './plays';
import { createSessionPages } from './listener-sessions';

// Report snapshots of the SQLite play log (store/play-reports.ts ReportSnapshot, docs/reports.md
// "One snapshot"): each report reads on a read-only connection of its own inside one read
// transaction. In WAL mode that transaction sees the file as it was at its first read while the
// store's connection goes on writing, and it blocks no writer. A reader is kept for the next
// report once released; a second report running at the same time opens one more.

/** Readers kept open between reports: most servers make one report at a time. */
const IDLE_READERS = 1;

interface Reader {
  db: Db;
  reads: ReportReads;
  /** Starts the read transaction: the snapshot is taken at its first read. */
  begin(): void;
}

function openReader(file: string): Reader {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // Read-only: a snapshot's reads never compute report columns (store-source.ts does that on the store).
    const firstRead = db.prepare('SELECT 1 FROM tracks LIMIT 1');
    return {
      db,
      reads: reportReadsOf(createSqlitePlayReports(db), { playPages: sqlitePlayPages(db), sessionPages: createSessionPages(db).sessionPages }),
      begin() {
        db.exec('BEGIN');
        firstRead.get();
      },
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * The snapshots of the store's file. A database in memory has no second connection to see it:
 * its reports read the store's own connection (`current`), as they always did.
 */
export function createSqliteReportSnapshots(db: Db, current: ReportReads): ReportSnapshots & { close(): void } {
  const idle: Reader[] = [];
  const open = new Set<Reader>();
  let closed = false;
  return {
    reportSnapshot(): Promise<ReportSnapshot> {
      if (closed) return Promise.reject(new Error('the store is closed'));
      if (db.memory) return Promise.resolve({ reads: current, release: () => Promise.resolve() });
      let reader: Reader;
      try {
        reader = idle.pop() ?? openReader(db.name);
        reader.begin();
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      open.add(reader);
      let released = false;
      return Promise.resolve({
        reads: reader.reads,
        release() {
          if (released) return Promise.resolve();
          released = true;
          open.delete(reader);
          if (!reader.db.open) return Promise.resolve();
          reader.db.exec('COMMIT');
          if (!closed && idle.length < IDLE_READERS) idle.push(reader);
          else reader.db.close();
          return Promise.resolve();
        },
      });
    },
    close() {
      closed = true;
      for (const reader of [...idle, ...open]) reader.db.close();
      idle.length = 0;
      open.clear();
    },
  };
}
