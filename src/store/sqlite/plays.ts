/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { EndReason, NewPlay, SessionInterval } from '../../domain/play';
import type { TrackFields } from '../../domain/track';
import type { Db } from './database';
import { createSqlitePlayReports } from './play-reports';
import type { PlayReportQueries } from '../play-reports';
import {
  EndedPlay,
  LatestPlay,
  PLAY_COLUMNS,
  PlacedPlay,
  PlayColumns,
  PlayLogStore,
  PlayRow,
  SESSION_COLUMNS,
  SessionRow,
  endNotBefore,
  placePlay,
  playFromRow,
  sessionFromRow,
} from '../plays';

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
    ...createListenerSessionStore(db),
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

const LONGEST_SQL = 'SELECT longest_ms FROM listener_session_bounds WHERE channel = ?';

/** The pages of listener sessions on `db` (the store's connection, or a report snapshot's). */
export function sqliteSessionPages(db: Db): PlayLogStore['sessionPages'] {
  const sessionPage = (channel: boolean) =>
    db.prepare<unknown[], SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM listener_sessions
        WHERE ${channel ? 'channel = ? AND ' : ''}(connected_at, id) > (?, ?) AND connected_at < ? AND (disconnected_at IS NULL OR disconnected_at > ?)
        ORDER BY connected_at, id LIMIT ?`,
    );
  const sessionsAll = sessionPage(false);
  const sessionsChannel = sessionPage(true);
  const longest = db.prepare<[string], { longest_ms: number }>(LONGEST_SQL);
  const longestAny = db.prepare<[], { longest_ms: number | null }>('SELECT max(longest_ms) AS longest_ms FROM listener_session_bounds');
  const openBeforeAll = db.prepare<[string], SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM listener_sessions WHERE disconnected_at IS NULL AND connected_at < ? ORDER BY connected_at, id`,
  );
  const openBeforeChannel = db.prepare<[string, string], SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM listener_sessions WHERE channel = ? AND disconnected_at IS NULL AND connected_at < ? ORDER BY connected_at, id`,
  );
  return async function* sessionPages(range) {
    // Sessions connected before `from` minus the longest closed one can overlap only if still open.
    const longestMs = range.channel === undefined ? (longestAny.get()?.longest_ms ?? 0) : (longest.get(range.channel)?.longest_ms ?? 0);
    const earliest = new Date(Date.parse(range.from) - longestMs).toISOString();
    const openBefore = range.channel === undefined ? openBeforeAll.all(earliest) : openBeforeChannel.all(range.channel, earliest);
    if (openBefore.length > 0) yield openBefore.map(sessionFromRow);
    let after: [string, number] = [earliest, 0];
    for (;;) {
      const rows =
        range.channel === undefined
          ? sessionsAll.all(after[0], after[1], range.to, range.from, PAGE)
          : sessionsChannel.all(range.channel, after[0], after[1], range.to, range.from, PAGE);
      if (rows.length > 0) yield rows.map(sessionFromRow);
      const last = rows[rows.length - 1];
      if (!last || rows.length < PAGE) return;
      after = [last.connected_at, last.id];
    }
  };
}

/** The SQLite listener sessions (the half of PlayLogStore that Icecast feeds). */
function createListenerSessionStore(
  db: Db,
): Pick<PlayLogStore, 'sessionPages' | 'overlapping' | 'openSession' | 'closeSession' | 'openSessions' | 'addressKey'> {
  const longest = db.prepare<[string], { longest_ms: number }>(LONGEST_SQL);
  const closedOverlapping = db.prepare<[string, string, string, string], SessionInterval & { connected_at: string; disconnected_at: string }>(
    `SELECT connected_at, disconnected_at FROM listener_sessions
      WHERE channel = ? AND connected_at >= ? AND connected_at < ? AND disconnected_at > ?`,
  );
  const openOverlapping = db.prepare<[string, string], { connected_at: string }>(
    'SELECT connected_at FROM listener_sessions WHERE channel = ? AND disconnected_at IS NULL AND connected_at < ?',
  );
  const findOpen = db.prepare<[string, string, string], SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM listener_sessions WHERE server = ? AND mount = ? AND client_id = ? AND disconnected_at IS NULL`,
  );
  const insertSession = db.prepare<[string, string, string, string, string, string, string, string], never>(
    `INSERT INTO listener_sessions (channel, source, server, mount, client_id, address, user_agent, connected_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const closeSession = db.prepare<[string, number], never>('UPDATE listener_sessions SET disconnected_at = ? WHERE id = ?');
  const widen = db.prepare<[string, number], never>(
    `INSERT INTO listener_session_bounds (channel, longest_ms) VALUES (?, ?)
      ON CONFLICT (channel) DO UPDATE SET longest_ms = max(longest_ms, excluded.longest_ms)`,
  );
  const openOfMount = db.prepare<[string, string], SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM listener_sessions WHERE server = ? AND mount = ? AND disconnected_at IS NULL ORDER BY id`,
  );
  const key = db.prepare<[], { value: string }>("SELECT value FROM playlog_keys WHERE name = 'address'");
  const close = db.transaction((found: SessionRow, at: string) => {
    const disconnectedAt = endNotBefore(found.connected_at, at);
    closeSession.run(disconnectedAt, found.id);
    widen.run(found.channel, Date.parse(disconnectedAt) - Date.parse(found.connected_at));
  });

  return {
    sessionPages: sqliteSessionPages(db),
    async overlapping(channel, startedAt, endedAt) {
      const longestMs = longest.get(channel)?.longest_ms ?? 0;
      const earliest = new Date(Date.parse(startedAt) - longestMs).toISOString();
      const closed = closedOverlapping
        .all(channel, earliest, endedAt, startedAt)
        .map((row) => ({ connectedAt: row.connected_at, disconnectedAt: row.disconnected_at }));
      const open = openOverlapping.all(channel, endedAt).map((row) => ({ connectedAt: row.connected_at, disconnectedAt: null }));
      return [...closed, ...open];
    },
    async openSession(session) {
      if (findOpen.get(session.server, session.mount, session.clientId)) return;
      insertSession.run(
        session.channel,
        session.source,
        session.server,
        session.mount,
        session.clientId,
        session.address,
        session.userAgent,
        session.connectedAt,
      );
    },
    async closeSession(sessionKey, at) {
      const found = findOpen.get(sessionKey.server, sessionKey.mount, sessionKey.clientId);
      if (!found) return false;
      close(found, at);
      return true;
    },
    async openSessions(server, mount) {
      return openOfMount.all(server, mount).map(sessionFromRow);
    },
    async addressKey() {
      return key.get()?.value ?? '';
    },
  };
}

function playRowOf(values: PlayPageValues): PlayRow {
  const [dbid, receivedAt, metadata, started_at, ended_at, end_reason, channel, kind, usage, dj, show, trimmed_seconds, listeners] = values;
  const columns: PlayColumns = { started_at, ended_at, end_reason, channel, kind, usage, dj, show, trimmed_seconds, listeners };
  return { dbid, receivedAt, metadata: JSON.parse(metadata) as TrackFields, play: playFromRow(columns, receivedAt) };
}
