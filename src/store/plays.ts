/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { EndReason, NewPlay, PlayInfo, PlayKind, PlayListeners, PlayUsage, SessionInterval } from '../domain/play';
import type { TrackFields } from '../domain/track';
import type { Db } from './database';

// The play log's store (docs/play-log.md): plays are rows of `tracks` with air-time columns, and
// listener sessions have a table of their own. This file holds the contract both backends keep,
// the row shapes they share, and the SQLite side; PostgreSQL's is postgres/plays.ts.

/** One play as the log keeps it: the record's metadata and its play-log fields. */
export interface PlayRow {
  dbid: number;
  receivedAt: string;
  metadata: TrackFields;
  play: PlayInfo;
}

/** A time range on started_at (plays) or an overlap range (sessions): `from` inclusive, `to` exclusive, ISO 8601 UTC. */
export interface PlayRange {
  from: string;
  to: string;
  /** Only this channel; all channels when absent. */
  channel?: string;
}

export type SessionSource = 'auth' | 'poll';

/** Which Icecast client a session is: unique among the open sessions. */
export interface SessionKey {
  /** The Icecast server as configured (its URL's origin), or `host:port` as its auth call names it. */
  server: string;
  mount: string;
  /** Icecast's client id. */
  clientId: string;
}

export interface NewSession extends SessionKey {
  channel: string;
  source: SessionSource;
  /** A keyed hash of the address, or the address itself with playlog.keepAddresses. */
  address: string;
  userAgent: string;
  connectedAt: string;
}

export interface ListenerSession extends NewSession {
  id: number;
  /** Null while the listener is connected. */
  disconnectedAt: string | null;
}

/** A play that has ended and whose listeners are still to be counted. */
export interface EndedPlay {
  dbid: number;
  channel: string;
  startedAt: string;
  endedAt: string;
}

/** Plays read per query while streaming a range: memory stays flat whatever the range. */
export const PLAY_PAGE = 500;

export interface PlayLogStore {
  /** Plays whose started_at is in the range, oldest first (started_at, dbid); read page by page. */
  plays(range: PlayRange): AsyncIterable<PlayRow>;
  /**
   * Listener sessions overlapping the range (connected before `to`, and still connected or
   * disconnected after `from`), by connected_at then id; read page by page.
   */
  sessions(range: PlayRange): AsyncIterable<ListenerSession>;
  /** Ends the channel's play on air at `at` (not before its start); answers its dbid, or null when none is on air. */
  end(channel: string, at: string, reason: EndReason): Promise<number | null>;
  /** Ends every play whose submitted duration ran out by `now` with nothing after it; answers their dbids. */
  endDue(now: string): Promise<number[]>;
  /** The earliest planned end among the plays on air, or null: when endDue has work next. */
  nextPlannedEnd(): Promise<string | null>;
  /** Ended plays whose listeners were not counted yet, oldest first. */
  uncounted(limit: number): Promise<EndedPlay[]>;
  /** Keeps a play's listeners (null: no listener source) and marks it counted. */
  setListeners(dbid: number, listeners: PlayListeners | null): Promise<void>;
  /** The sessions of a channel that overlap [startedAt, endedAt). */
  overlapping(channel: string, startedAt: string, endedAt: string): Promise<SessionInterval[]>;
  /** Records a listener who joined; a second open session with the same key is ignored. */
  openSession(session: NewSession): Promise<void>;
  /** Records that a listener left; false when no such session is open. */
  closeSession(key: SessionKey, at: string): Promise<boolean>;
  /** The open sessions of one server's mount (polling compares them with Icecast's list). */
  openSessions(server: string, mount: string): Promise<ListenerSession[]>;
  /** The key of the address hash, made once per database. */
  addressKey(): Promise<string>;
  /** Bumped by every change of a play's end or listeners here: part of TrackStore.version(). */
  version(): number;
}

/** The play-log columns of `tracks`, in the order playFromRow reads them. */
export const PLAY_COLUMNS = 'started_at, ended_at, end_reason, channel, kind, usage, dj, show, trimmed_seconds, listeners';

export interface PlayColumns {
  started_at: string | null;
  ended_at: string | null;
  end_reason: string | null;
  channel: string;
  kind: string;
  usage: string;
  dj: string | null;
  show: string | null;
  trimmed_seconds: number | null;
  /** SQLite: JSON text; PostgreSQL: parsed by the driver. */
  listeners: string | PlayListeners | null;
}

export function playFromRow(row: PlayColumns, receivedAt: string): PlayInfo {
  const play: PlayInfo = {
    startedAt: row.started_at ?? receivedAt,
    endedAt: row.ended_at,
    endReason: row.end_reason as EndReason | null,
    channel: row.channel,
    kind: row.kind as PlayKind,
    usage: row.usage as PlayUsage,
    listeners: typeof row.listeners === 'string' ? (JSON.parse(row.listeners) as PlayListeners) : row.listeners,
  };
  if (row.dj !== null) play.dj = row.dj;
  if (row.show !== null) play.show = row.show;
  if (row.trimmed_seconds !== null) play.trimmedSeconds = row.trimmed_seconds;
  return play;
}

/** The play a record without one gets: it aired from its arrival, on the main channel, as music. */
export function defaultPlay(receivedAt: string): NewPlay {
  return { startedAt: receivedAt, channel: 'main', kind: 'music', usage: 'feature' };
}

/** The channel's latest play, which a new one follows. */
export interface LatestPlay {
  dbid: number;
  started_at: string;
  ended_at: string | null;
  planned_end_at: string | null;
}

/** How a new play changes the one before it on its channel (both backends). */
export interface PlacedPlay {
  /** The new play's start: never before the latest play's start, so plays stay in order. */
  startedAt: string;
  /** The latest play's new end, when it changes. */
  previousEnd?: { dbid: number; endedAt: string; reason: EndReason; trimmedSeconds: number | null };
}

/**
 * Places a new play after the channel's latest (docs/play-log.md "Air times"): a play on air ends
 * where the new one starts (or where its submitted duration ran out, if that came first); a play
 * that already ended after the new start is trimmed to it, and the cut is recorded.
 */
export function placePlay(latest: LatestPlay | undefined, requestedStart: string): PlacedPlay {
  if (!latest) return { startedAt: requestedStart };
  const startedAt = requestedStart < latest.started_at ? latest.started_at : requestedStart;
  if (latest.ended_at === null) {
    if (latest.planned_end_at !== null && latest.planned_end_at <= startedAt) {
      return { startedAt, previousEnd: { dbid: latest.dbid, endedAt: latest.planned_end_at, reason: 'duration', trimmedSeconds: null } };
    }
    return { startedAt, previousEnd: { dbid: latest.dbid, endedAt: startedAt, reason: 'next', trimmedSeconds: null } };
  }
  if (latest.ended_at <= startedAt) return { startedAt };
  const cut = (Date.parse(latest.ended_at) - Date.parse(startedAt)) / 1000;
  return { startedAt, previousEnd: { dbid: latest.dbid, endedAt: startedAt, reason: 'next', trimmedSeconds: cut } };
}

/** The planned end moves with the start: a play placed later than it asked runs its whole duration from there. */
export function plannedEndFor(play: NewPlay, startedAt: string): string | null {
  if (play.plannedEndAt === undefined) return null;
  const durationMs = Date.parse(play.plannedEndAt) - Date.parse(play.startedAt);
  return new Date(Date.parse(startedAt) + Math.max(0, durationMs)).toISOString();
}

/** An end never before the play's start (a clock that went back, an end sent at once). */
export function endNotBefore(startedAt: string, at: string): string {
  return at < startedAt ? startedAt : at;
}

interface PlayPageRow extends PlayColumns {
  dbid: number;
  received_at: string;
  metadata: string;
}

interface SessionRow {
  id: number;
  channel: string;
  source: SessionSource;
  server: string;
  mount: string;
  client_id: string;
  address: string;
  user_agent: string;
  connected_at: string;
  disconnected_at: string | null;
}

export const SESSION_COLUMNS = 'id, channel, source, server, mount, client_id, address, user_agent, connected_at, disconnected_at';

export function sessionFromRow(row: SessionRow): ListenerSession {
  return {
    id: Number(row.id),
    channel: row.channel,
    source: row.source,
    server: row.server,
    mount: row.mount,
    clientId: row.client_id,
    address: row.address,
    userAgent: row.user_agent,
    connectedAt: row.connected_at,
    disconnectedAt: row.disconnected_at,
  };
}

/** The SQLite play log: the placing of a new play runs inside the track insert (tracks.ts). */
export function createPlayLogStore(db: Db): PlayLogStore & { place(play: NewPlay): PlacedPlay } {
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
  const setListeners = db.prepare<[string | null, number], never>('UPDATE tracks SET listeners = ?, listeners_done = 1 WHERE dbid = ?');
  const playPage = (channel: boolean) =>
    db.prepare<unknown[], PlayPageRow>(
      `SELECT dbid, received_at, metadata, ${PLAY_COLUMNS} FROM tracks
        WHERE ${channel ? 'channel = ? AND ' : ''}(started_at, dbid) > (?, ?) AND started_at < ?
        ORDER BY started_at, dbid LIMIT ?`,
    );
  const pageAll = playPage(false);
  const pageChannel = playPage(true);

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
    place(play) {
      const placed = placePlay(latest.get(play.channel), play.startedAt);
      if (placed.previousEnd) applyEnd(placed.previousEnd);
      return placed;
    },
    async *plays(range) {
      let after: [string, number] = [range.from, 0];
      for (;;) {
        const rows =
          range.channel === undefined
            ? pageAll.all(after[0], after[1], range.to, PLAY_PAGE)
            : pageChannel.all(range.channel, after[0], after[1], range.to, PLAY_PAGE);
        yield* rows.map(playRowOf);
        const last = rows[rows.length - 1];
        if (!last || rows.length < PLAY_PAGE) return;
        after = [last.started_at ?? '', last.dbid];
      }
    },
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
    async setListeners(dbid, listeners) {
      setListeners.run(listeners === null ? null : JSON.stringify(listeners), dbid);
      writes += 1;
    },
    ...createListenerSessionStore(db),
    version: () => writes,
  };
}

/** The SQLite listener sessions (the half of PlayLogStore that Icecast feeds). */
function createListenerSessionStore(db: Db): Pick<PlayLogStore, 'sessions' | 'overlapping' | 'openSession' | 'closeSession' | 'openSessions' | 'addressKey'> {
  const sessionPage = (channel: boolean) =>
    db.prepare<unknown[], SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM listener_sessions
        WHERE ${channel ? 'channel = ? AND ' : ''}(connected_at, id) > (?, ?) AND connected_at < ? AND (disconnected_at IS NULL OR disconnected_at > ?)
        ORDER BY connected_at, id LIMIT ?`,
    );
  const sessionsAll = sessionPage(false);
  const sessionsChannel = sessionPage(true);
  const longest = db.prepare<[string], { longest_ms: number }>('SELECT longest_ms FROM listener_session_bounds WHERE channel = ?');
  const longestAny = db.prepare<[], { longest_ms: number | null }>('SELECT max(longest_ms) AS longest_ms FROM listener_session_bounds');
  const openBeforeAll = db.prepare<[string], SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM listener_sessions WHERE disconnected_at IS NULL AND connected_at < ? ORDER BY connected_at, id`,
  );
  const openBeforeChannel = db.prepare<[string, string], SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM listener_sessions WHERE channel = ? AND disconnected_at IS NULL AND connected_at < ? ORDER BY connected_at, id`,
  );
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
    async *sessions(range) {
      // Sessions connected before `from` minus the longest closed one can overlap only if still open.
      const longestMs = range.channel === undefined ? (longestAny.get()?.longest_ms ?? 0) : (longest.get(range.channel)?.longest_ms ?? 0);
      const earliest = new Date(Date.parse(range.from) - longestMs).toISOString();
      const openBefore = range.channel === undefined ? openBeforeAll.all(earliest) : openBeforeChannel.all(range.channel, earliest);
      yield* openBefore.map(sessionFromRow);
      let after: [string, number] = [earliest, 0];
      for (;;) {
        const rows =
          range.channel === undefined
            ? sessionsAll.all(after[0], after[1], range.to, range.from, PLAY_PAGE)
            : sessionsChannel.all(range.channel, after[0], after[1], range.to, range.from, PLAY_PAGE);
        yield* rows.map(sessionFromRow);
        const last = rows[rows.length - 1];
        if (!last || rows.length < PLAY_PAGE) return;
        after = [last.connected_at, last.id];
      }
    },
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

function playRowOf(row: PlayPageRow): PlayRow {
  return { dbid: row.dbid, receivedAt: row.received_at, metadata: JSON.parse(row.metadata) as TrackFields, play: playFromRow(row, row.received_at) };
}
