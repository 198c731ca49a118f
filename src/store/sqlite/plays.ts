/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { EndReason, NewPlay } from '../../domain/play';
import type { TrackFields } from '../../domain/track';
import type { Db } from './database';
import { createSqliteSessionStore } from './listener-sessions';
import { createSqlitePlayReports } from './play-reports';
import type { PlayReportQueries } from '../play-reports';
import { EndedPlay, LatestPlay, PLAY_COLUMNS, PlacedPlay, PlayColumns, PlayLogStore, PlayRow, endNotBefore, placePlay, playFromRow } from '../plays';

/**
 * Rows per query here (at most PLAY_PAGE, src/store/plays.ts): a read in the same process costs no
 * round trip, and a small page keeps few rows alive at each young-generation collection, so a
 * month's report grows V8's heap less (docs/reports.md "Memory and speed").
 */
const PAGE = 50;

/**
 * A page row as values in the order of its SELECT (`dbid, received_at, metadata`, then
 * PLAY_COLUMNS of src/store/plays.ts), as better-sqlite3's raw mode gives them: a month's report
 * reads every play, and an array per row costs half what an object with named columns does
 * (docs/reports.md "Memory and speed").
 */
type PlayPageValues = [
  dbid: number,
  received_at: string,
  metadata: string,
  started_at: string | null,
  ended_at: string | null,
  end_reason: string | null,
  channel: string,
  kind: string,
  usage: string,
  dj: string | null,
  show: string | null,
  trimmed_seconds: number | null,
  listeners: string | null,
];

/** The SQLite play log: the placing of a new play runs inside the track insert (tracks.ts). */
export function createPlayLogStore(db: Db): PlayLogStore & PlayReportQueries & { place(play: NewPlay): PlacedPlay } {
  const latest = db.prepare<[string], LatestPlay>(
    'SELECT dbid, started_at, ended_at, planned_end_at FROM tracks WHERE channel = ? AND started_at IS NOT NULL ORDER BY started_at DESC, dbid DESC LIMIT 1',
  );
  const setEnd = db.prepare<[string, string, number | null, number], never>(
    'UPDATE tracks SET ended_at = ?, end_reason = ?, trimmed_seconds = coalesce(trimmed_seconds, 0) + ?, listeners_done = 0 WHERE dbid = ?',
  );
  const setEndKeepTrim = db.prepare<[string, string, number], never>('UPDATE tracks SET ended_at = ?, end_reason = ?, listeners_done = 0 WHERE dbid = ?');
  const onAir = db.prepare<[string], { dbid: number; started_at: string }>(
    'SELECT dbid, started_at FROM tracks WHERE channel = ? AND ended_at IS NULL ORDER BY started_at DESC, dbid DESC LIMIT 1',
  );
  const due = db.prepare<[string], { dbid: number; planned_end_at: string }>(
    'SELECT dbid, planned_end_at FROM tracks WHERE ended_at IS NULL AND planned_end_at IS NOT NULL AND planned_end_at <= ?',
  );
  const nextPlanned = db.prepare<[], { at: string | null }>('SELECT min(planned_end_at) AS at FROM tracks WHERE ended_at IS NULL');
  const uncounted = db.prepare<[number], EndedPlay & { started_at: string; ended_at: string }>(
    'SELECT dbid, channel, started_at, ended_at FROM tracks WHERE listeners_done = 0 AND ended_at IS NOT NULL ORDER BY dbid LIMIT ?',
  );
  // Plays of one channel never overlap: one that ended after `since` is the one on air then, or a later one.
  const markRecount = db.prepare<{ channel: string; since: string }, never>(
    `UPDATE tracks SET listeners_done = 0
      WHERE channel = :channel AND listeners_done = 1 AND ended_at > :since
        AND started_at >= coalesce((SELECT max(started_at) FROM tracks WHERE channel = :channel AND started_at <= :since), '')`,
  );
  const replaceListeners = db.prepare<[string, number], never>('UPDATE tracks SET listeners = ?, listeners_done = 1 WHERE dbid = ?');
  const setListeners = db.prepare<[string | null, number], never>('UPDATE tracks SET listeners = ?, listeners_done = 1 WHERE dbid = ? AND listeners_done = 0');

  let writes = 0;
  const applyEnd = (end: NonNullable<PlacedPlay['previousEnd']>) => {
    if (end.trimmedSeconds === null) setEndKeepTrim.run(end.endedAt, end.reason, end.dbid);
    else setEnd.run(end.endedAt, end.reason, end.trimmedSeconds, end.dbid);
  };
  const endOnAir = db.transaction((channel: string, at: string, reason: EndReason): number | null => {
    const play = onAir.get(channel);
    if (!play) return null;
    setEndKeepTrim.run(endNotBefore(play.started_at, at), reason, play.dbid);
    return play.dbid;
  });
  const endDue = db.transaction((now: string): number[] =>
    due.all(now).map((play) => {
      setEndKeepTrim.run(play.planned_end_at, 'duration', play.dbid);
      return play.dbid;
    }),
  );

  return {
    ...createSqlitePlayReports(db),
    place(play) {
      const placed = placePlay(latest.get(play.channel), play.startedAt);
      if (placed.previousEnd) applyEnd(placed.previousEnd);
      return placed;
    },
    playPages: sqlitePlayPages(db),
    async end(channel, at, reason) {
      const dbid = endOnAir(channel, at, reason);
      if (dbid !== null) writes += 1;
      return dbid;
    },
    async endDue(now) {
      const ended = endDue(now);
      writes += ended.length;
      return ended;
    },
    async nextPlannedEnd() {
      return nextPlanned.get()?.at ?? null;
    },
    async uncounted(limit) {
      return uncounted.all(limit).map((row) => ({ dbid: row.dbid, channel: row.channel, startedAt: row.started_at, endedAt: row.ended_at }));
    },
    async recountFrom(channel, since) {
      return markRecount.run({ channel, since }).changes;
    },
    async setListeners(dbid, listeners) {
      writes += setListeners.run(listeners === null ? null : JSON.stringify(listeners), dbid).changes;
    },
    async replaceListeners(dbid, listeners) {
      writes += replaceListeners.run(JSON.stringify(listeners), dbid).changes;
    },
    ...createSqliteSessionStore(db),
    version: () => writes,
  };
}

/** The pages of plays on `db` (the store's connection, or a report snapshot's: report-snapshot.ts). */
export function sqlitePlayPages(db: Db): PlayLogStore['playPages'] {
  const playPage = (channel: boolean) =>
    db
      .prepare<unknown[], PlayPageValues>(
        `SELECT dbid, received_at, metadata, ${PLAY_COLUMNS} FROM tracks
          WHERE ${channel ? 'channel = ? AND ' : ''}(started_at, dbid) > (?, ?) AND started_at < ?
          ORDER BY started_at, dbid LIMIT ?`,
      )
      .raw(true);
  const pageAll = playPage(false);
  const pageChannel = playPage(true);
  return async function* playPages(range) {
    let after: [string, number] = [range.from, 0];
    for (;;) {
      const rows =
        range.channel === undefined ? pageAll.all(after[0], after[1], range.to, PAGE) : pageChannel.all(range.channel, after[0], after[1], range.to, PAGE);
      if (rows.length > 0) yield rows.map(playRowOf);
      const last = rows[rows.length - 1];
      if (!last || rows.length < PAGE) return;
      const [lastDbid, , , lastStartedAt] = last;
      after = [lastStartedAt ?? '', lastDbid];
    }
  };
}

function playRowOf(values: PlayPageValues): PlayRow {
  const [dbid, receivedAt, metadata, started_at, ended_at, end_reason, channel, kind, usage, dj, show, trimmed_seconds, listeners] = values;
  const columns: PlayColumns = { started_at, ended_at, end_reason, channel, kind, usage, dj, show, trimmed_seconds, listeners };
  return { dbid, receivedAt, metadata: JSON.parse(metadata) as TrackFields, play: playFromRow(columns, receivedAt) };
}
