/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { PlayListeners } from '../../domain/play';
import type { Db } from './database';
import { SESSION_COLUMNS, SessionRow, countCut, endNotBefore, sessionFromRow, type MountLive, type PlayLogStore } from '../plays';
import type { ListenerSessionStore } from '../listener-sessions';

// The SQLite listener sessions (the half of PlayLogStore that Icecast feeds, store/plays.ts has
// the contract; docs/play-log.md "Listener sessions"). A play's listeners are one aggregate query
// over the sessions that changed since it started and the open totals migration 18 keeps.

/** Rows per page of a session range (as sqlite/plays.ts pages plays). */
const PAGE = 50;

type SessionStore = ListenerSessionStore;

/**
 * The sessions of a play that the open totals do not cover, as intervals clipped to it (`f`, `t`),
 * by countListeners' overlap rule (domain/play.ts): closed ones that ended after it started (the
 * index on disconnected_at), open ones that connected at or after @cut (the open index). Named
 * parameters: channel, cut, start, end, span, min, now (store/plays.ts countCut).
 */
const PLAY_SESSIONS = `
  SELECT address, user_agent, max(connected_at, @start) AS f, min(disconnected_at, @end) AS t
    FROM listener_sessions INDEXED BY listener_sessions_closed_by_end
   WHERE channel = @channel AND disconnected_at > @start AND connected_at < @end
     AND (julianday(disconnected_at) - julianday(connected_at)) * 86400.0 >= @min
  UNION ALL
  SELECT address, user_agent, max(connected_at, @start), @end
    FROM listener_sessions INDEXED BY listener_sessions_open_by_channel
   WHERE channel = @channel AND disconnected_at IS NULL AND connected_at >= @cut AND connected_at < @end
     AND (julianday(@now) - julianday(connected_at)) * 86400.0 >= @min`;

/**
 * The open sessions connected before @cut (each spans the whole play and passes the minimum
 * length), from the totals migration 18 keeps: `n` sessions of `l` distinct listeners.
 */
const OPEN_BEFORE_CUT = `
  SELECT coalesce((SELECT sessions FROM listener_open_channels WHERE channel = @channel), 0)
         - (SELECT count(*) FROM listener_sessions INDEXED BY listener_sessions_open_by_channel
             WHERE channel = @channel AND disconnected_at IS NULL AND connected_at >= @cut) AS n,
         coalesce((SELECT listeners FROM listener_open_channels WHERE channel = @channel), 0)
         - (SELECT count(*) FROM listener_open_listeners WHERE channel = @channel AND earliest_open >= @cut) AS l`;

/**
 * atp: distinct listeners (those open since before @cut, and the others' not among them);
 * listener_ms: the clipped intervals summed; peak: the running sum of joins (+1) and leaves (-1),
 * a leave first at the same moment (a reconnect is one), on top of the sessions open all along.
 */
const COUNT_LISTENERS = `
  WITH s AS (${PLAY_SESSIONS}),
       pre AS (${OPEN_BEFORE_CUT}),
       edges AS (SELECT f AS at, 1 AS step FROM s UNION ALL SELECT t, -1 FROM s),
       running AS (SELECT sum(step) OVER (ORDER BY at, step ROWS UNBOUNDED PRECEDING) AS n FROM edges)
  SELECT (SELECT l FROM pre)
         + (SELECT count(*) FROM (SELECT DISTINCT address, user_agent FROM s) AS d
             WHERE NOT EXISTS (SELECT 1 FROM listener_open_listeners AS o
                                WHERE o.channel = @channel AND o.address = d.address AND o.user_agent = d.user_agent AND o.earliest_open < @cut)) AS atp,
         (SELECT n FROM pre) * @span + (SELECT total((julianday(t) - julianday(f)) * 86400000.0) FROM s WHERE t > f) AS listener_ms,
         (CASE WHEN @span > 0 THEN (SELECT n FROM pre) ELSE 0 END) + (SELECT coalesce(max(n), 0) FROM running) AS peak`;

export function createSqliteSessionStore(db: Db): SessionStore {
  const count = db.prepare<[Record<string, string | number>], { atp: number; listener_ms: number; peak: number }>(COUNT_LISTENERS);
  const findOpen = db.prepare<[string, string, string], SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM listener_sessions WHERE server = ? AND mount = ? AND client_id = ? AND disconnected_at IS NULL`,
  );
  const openOnMount = db.prepare<[string, string], { sessions: number }>('SELECT sessions FROM listener_open_mounts WHERE server = ? AND mount = ?');
  const endedAfter = db.prepare<[string, string, string, string], { found: number }>(
    'SELECT 1 AS found FROM listener_sessions WHERE server = ? AND mount = ? AND client_id = ? AND disconnected_at >= ? LIMIT 1',
  );
  const insertSession = db.prepare<[string, string, string, string, string, string, string, string], never>(
    `INSERT INTO listener_sessions (channel, source, server, mount, client_id, address, user_agent, connected_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const closeSession = db.prepare<[string, number], never>('UPDATE listener_sessions SET disconnected_at = ? WHERE id = ?');
  const widen = db.prepare<[string, number], never>(
    `INSERT INTO listener_session_bounds (channel, longest_ms) VALUES (?, ?)
      ON CONFLICT (channel) DO UPDATE SET longest_ms = max(longest_ms, excluded.longest_ms)`,
  );
  const overdue = db.prepare<[string], SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM listener_sessions WHERE disconnected_at IS NULL AND connected_at < ? LIMIT 1000`,
  );
  const laterIds = db.prepare<[string, string, string], SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM listener_sessions
      WHERE server = ? AND mount = ? AND disconnected_at IS NULL AND length(client_id) BETWEEN 1 AND 20 AND client_id NOT GLOB '*[^0-9]*'
        AND CAST(client_id AS INTEGER) > CAST(? AS INTEGER)`,
  );
  const openOfMount = db.prepare<[string, string], SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM listener_sessions WHERE server = ? AND mount = ? AND disconnected_at IS NULL ORDER BY id`,
  );
  const close = db.transaction((found: SessionRow, at: string) => {
    const disconnectedAt = endNotBefore(found.connected_at, at);
    closeSession.run(disconnectedAt, found.id);
    widen.run(found.channel, Date.parse(disconnectedAt) - Date.parse(found.connected_at));
  });
  const open = db.transaction((session: Parameters<SessionStore['openSession']>[0], maxOpen: number) => {
    if (findOpen.get(session.server, session.mount, session.clientId)) return 'already-open' as const;
    if ((openOnMount.get(session.server, session.mount)?.sessions ?? 0) >= maxOpen) return 'full' as const;
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
    return 'opened' as const;
  });

  return {
    ...createSessionPages(db),
    async countListeners(channel, startedAt, endedAt, options): Promise<PlayListeners> {
      const row = count.get({
        channel,
        ...countCut(startedAt, endedAt, options),
        start: startedAt,
        end: endedAt,
        min: options.minSessionSeconds,
        now: options.now,
      });
      return { atp: row?.atp ?? 0, listener_seconds: Math.round((row?.listener_ms ?? 0) / 1000), peak: row?.peak ?? 0 };
    },
    async openSession(session, maxOpen) {
      return open.immediate(session, maxOpen);
    },
    async closeSession(sessionKey, at) {
      const found = findOpen.get(sessionKey.server, sessionKey.mount, sessionKey.clientId);
      if (!found) return false;
      close(found, at);
      return true;
    },
    async endedSince(sessionKey, since) {
      return endedAfter.get(sessionKey.server, sessionKey.mount, sessionKey.clientId, since) !== undefined;
    },
    async closeOverdue(now, maxMs) {
      const before = new Date(Date.parse(now) - maxMs).toISOString();
      let closed = 0;
      for (;;) {
        const rows = overdue.all(before);
        for (const row of rows) close(row, new Date(Date.parse(row.connected_at) + maxMs).toISOString());
        closed += rows.length;
        if (rows.length < 1000) return closed;
      }
    },
    async closeEarlierRun(server, mount, clientId, at) {
      const earlier = laterIds.all(server, mount, clientId);
      for (const row of earlier) close(row, at);
      return earlier.length;
    },
    async openSessions(server, mount) {
      return openOfMount.all(server, mount).map(sessionFromRow);
    },
    ...createMountLiveStore(db),
  };
}

/** When svc saw each mount live (table icecast_mounts, migration 17). */
function createMountLiveStore(db: Db): Pick<PlayLogStore, 'mountLive' | 'markLive' | 'markEnded'> {
  const live = db.prepare<[string, string], { live_since: string; ended_at: string | null }>(
    'SELECT live_since, ended_at FROM icecast_mounts WHERE server = ? AND mount = ?',
  );
  const markLive = db.prepare<[string, string, string], never>(
    `INSERT INTO icecast_mounts (server, mount, live_since) VALUES (?, ?, ?)
      ON CONFLICT (server, mount) DO UPDATE SET
        live_since = CASE WHEN ended_at IS NULL THEN min(live_since, excluded.live_since) ELSE max(ended_at, excluded.live_since) END,
        ended_at = NULL`,
  );
  const markEnded = db.prepare<[string, string, string], never>('UPDATE icecast_mounts SET ended_at = ? WHERE server = ? AND mount = ? AND ended_at IS NULL');
  return {
    async mountLive(server, mount): Promise<MountLive | undefined> {
      const row = live.get(server, mount);
      return row ? { liveSince: row.live_since, endedAt: row.ended_at } : undefined;
    },
    async markLive(server, mount, since) {
      markLive.run(server, mount, since);
    },
    async markEnded(server, mount, at) {
      markEnded.run(at, server, mount);
    },
  };
}

/** Sessions overlapping a range, page by page (the reports' read). */
/** The pages of listener sessions on `db` (the store's connection, or a report snapshot's: report-snapshot.ts). */
export function createSessionPages(db: Db): Pick<PlayLogStore, 'sessionPages'> {
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
  return {
    async *sessionPages(range) {
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
    },
  };
}
