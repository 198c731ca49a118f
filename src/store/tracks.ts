/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { TrackFields, TrackRecord } from '../domain/track';
import type { Db } from './database';

interface TrackRow {
  dbid: number;
  received_seq: number;
  received_at: string;
  metadata: string;
}

export interface NewTrack {
  receivedSeq: number;
  receivedAt: string;
  metadata: TrackFields;
}

/** Records and dbids (issue 15: one asynchronous interface, SQLite or PostgreSQL behind it). */
export interface TrackStore {
  /** Stores one submission in its own transaction and returns it with its dbid. */
  insert(track: NewTrack): Promise<TrackRecord>;
  /** The stored record that arrived last (decisions.md), or null when nothing is stored. */
  current(): Promise<TrackRecord | null>;
  byDbid(dbid: number): Promise<TrackRecord | null>;
  /** Records stored after `dbid`, oldest first (an instance catching up after a lost connection). */
  since(dbid: number, limit: number): Promise<TrackRecord[]>;
  /** Replaces the metadata of a stored record (e.g. a cover that arrived after the response). */
  updateMetadata(dbid: number, metadata: TrackFields): Promise<void>;
  count(): Promise<number>;
  /** Next arrival number; continues after a restart (and, on PostgreSQL, across instances). */
  nextReceivedSeq(): Promise<number>;
}

/** The SQLite store: synchronous better-sqlite3 calls behind the asynchronous interface. */

export function createTrackStore(db: Db): TrackStore {
  const insert = db.prepare<[number, string, string, string], never>(
    'INSERT INTO tracks (received_seq, received_at, stored_at, metadata) VALUES (?, ?, ?, ?)',
  );
  const current = db.prepare<[], TrackRow>(
    'SELECT dbid, received_seq, received_at, metadata FROM tracks ORDER BY received_seq DESC, dbid DESC LIMIT 1',
  );
  const byDbid = db.prepare<[number], TrackRow>('SELECT dbid, received_seq, received_at, metadata FROM tracks WHERE dbid = ?');
  const update = db.prepare<[string, number], never>('UPDATE tracks SET metadata = ? WHERE dbid = ?');
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM tracks');
  const maxSeq = db.prepare<[], { seq: number | null }>('SELECT max(received_seq) AS seq FROM tracks');
  const since = db.prepare<[number, number], TrackRow>(
    'SELECT dbid, received_seq, received_at, metadata FROM tracks WHERE dbid > ? ORDER BY dbid LIMIT ?',
  );

  let lastSeq = maxSeq.get()?.seq ?? 0;

  return {
    async insert(track) {
      const info = insert.run(track.receivedSeq, track.receivedAt, new Date().toISOString(), JSON.stringify(track.metadata));
      return { dbid: Number(info.lastInsertRowid), receivedSeq: track.receivedSeq, receivedAt: track.receivedAt, metadata: track.metadata };
    },
    async current() {
      const row = current.get();
      return row ? fromRow(row) : null;
    },
    async since(dbid, limit) {
      return since.all(dbid, limit).map(fromRow);
    },
    async byDbid(dbid) {
      const row = byDbid.get(dbid);
      return row ? fromRow(row) : null;
    },
    async updateMetadata(dbid, metadata) {
      update.run(JSON.stringify(metadata), dbid);
    },
    async count() {
      return count.get()?.n ?? 0;
    },
    async nextReceivedSeq() {
      lastSeq += 1;
      return lastSeq;
    },
  };
}

function fromRow(row: TrackRow): TrackRecord {
  return {
    dbid: row.dbid,
    receivedSeq: row.received_seq,
    receivedAt: row.received_at,
    metadata: JSON.parse(row.metadata) as TrackFields,
  };
}
