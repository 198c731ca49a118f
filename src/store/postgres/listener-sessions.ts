import type pg from 'pg';
import type { PlayListeners } from '../../domain/play';
import {
  PLAY_PAGE,
  SESSION_COLUMNS,
  countCut,
  endNotBefore,
  sessionFromRow,
  type ListenerSession,
  type MountLive,
  type PlayLogStore,
  type SessionRow,
} from '../plays';
import { inTransaction, type Queryable } from './connection';
import type { ListenerSessionStore } from '../listener-sessions';

// The PostgreSQL listener sessions, as the SQLite ones (sqlite/listener-sessions.ts; the contract
// is store/plays.ts). A play's listeners are one aggregate query over what changed since it
// started and the open totals migration 15 keeps; instances sharing the database agree on the cap
// per mount through an advisory lock on the mount. A batch of closes takes its channels' rows in
// order (closeOverdue), as the triggers of migration 15 take them.

type SessionStore = ListenerSessionStore;

/** As sqlite/listener-sessions.ts COUNT_LISTENERS: $1 channel, $2 cut, $3 start, $4 end, $5 min, $6 now, $7 span (store/plays.ts countCut). */
const COUNT_LISTENERS = `
  WITH s AS (
    SELECT address, user_agent, greatest(connected_at, $3) AS f, least(disconnected_at, $4) AS t
      FROM listener_sessions
     WHERE channel = $1 AND disconnected_at > $3 AND connected_at < $4
       AND extract(epoch FROM disconnected_at::timestamptz - connected_at::timestamptz) >= $5
    UNION ALL
    SELECT address, user_agent, greatest(connected_at, $3), $4
      FROM listener_sessions
     WHERE channel = $1 AND disconnected_at IS NULL AND connected_at >= $2 AND connected_at < $4
       AND extract(epoch FROM $6::timestamptz - connected_at::timestamptz) >= $5
  ),
  pre AS (
    SELECT coalesce((SELECT sessions FROM listener_open_channels WHERE channel = $1), 0)
           - (SELECT count(*) FROM listener_sessions WHERE channel = $1 AND disconnected_at IS NULL AND connected_at >= $2) AS n,
           coalesce((SELECT listeners FROM listener_open_channels WHERE channel = $1), 0)
           - (SELECT count(*) FROM listener_open_listeners WHERE channel = $1 AND earliest_open >= $2) AS l
  ),
  edges AS (SELECT f AS at, 1 AS step FROM s UNION ALL SELECT t, -1 FROM s),
  running AS (SELECT sum(step) OVER (ORDER BY at, step ROWS UNBOUNDED PRECEDING) AS n FROM edges)
  SELECT (SELECT l FROM pre)
         + (SELECT count(*) FROM (SELECT DISTINCT address, user_agent FROM s) AS d
             WHERE NOT EXISTS (SELECT 1 FROM listener_open_listeners AS o
                                WHERE o.channel = $1 AND o.address = d.address AND o.user_agent = d.user_agent AND o.earliest_open < $2)) AS atp,
         (SELECT n FROM pre) * $7::bigint
         + (SELECT coalesce(sum(extract(epoch FROM t::timestamptz - f::timestamptz) * 1000), 0) FROM s WHERE t > f) AS listener_ms,
         (CASE WHEN $7::bigint > 0 THEN (SELECT n FROM pre) ELSE 0 END) + (SELECT coalesce(max(n), 0) FROM running) AS peak`;

const mountLock = (client: Pick<pg.PoolClient, 'query'>, server: string, mount: string) =>
  client.query("SELECT pg_advisory_xact_lock(hashtext('svc-mount:' || $1 || ' ' || $2))", [server, mount]);

/** Closes a session at `at` (never before it connected) and widens its channel's longest-session bound. */
async function closeRow(
  client: Pick<pg.PoolClient, 'query'>,
  session: { id: string | number; channel: string; connected_at: string },
  at: string,
): Promise<void> {
  const disconnectedAt = endNotBefore(session.connected_at, at);
  await client.query('UPDATE listener_sessions SET disconnected_at = $1 WHERE id = $2', [disconnectedAt, session.id]);
  await client.query(
    `INSERT INTO listener_session_bounds (channel, longest_ms) VALUES ($1, $2)
      ON CONFLICT (channel) DO UPDATE SET longest_ms = greatest(listener_session_bounds.longest_ms, excluded.longest_ms)`,
    [session.channel, Date.parse(disconnectedAt) - Date.parse(session.connected_at)],
  );
}

export function createPostgresSessionStore(pool: pg.Pool): SessionStore {
  return {
    ...createSessionPages(pool),
    async countListeners(channel, startedAt, endedAt, options): Promise<PlayListeners> {
      const { cut, span } = countCut(startedAt, endedAt, options);
      const result = await pool.query<{ atp: string; listener_ms: string; peak: string }>(COUNT_LISTENERS, [
        channel,
        cut,
        startedAt,
        endedAt,
        options.minSessionSeconds,
        options.now,
        span,
      ]);
      const row = result.rows[0];
      return { atp: Number(row?.atp ?? 0), listener_seconds: Math.round(Number(row?.listener_ms ?? 0) / 1000), peak: Number(row?.peak ?? 0) };
    },
    async openSession(session, maxOpen) {
      return inTransaction(pool, async (client) => {
        await mountLock(client, session.server, session.mount);
        const found = await client.query('SELECT 1 FROM listener_sessions WHERE server = $1 AND mount = $2 AND client_id = $3 AND disconnected_at IS NULL', [
          session.server,
          session.mount,
          session.clientId,
        ]);
        if (found.rows.length > 0) return 'already-open' as const;
        const open = await client.query<{ sessions: string }>('SELECT sessions FROM listener_open_mounts WHERE server = $1 AND mount = $2', [
          session.server,
          session.mount,
        ]);
        if (Number(open.rows[0]?.sessions ?? 0) >= maxOpen) return 'full' as const;
        await client.query(
          `INSERT INTO listener_sessions (channel, source, server, mount, client_id, address, user_agent, connected_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [session.channel, session.source, session.server, session.mount, session.clientId, session.address, session.userAgent, session.connectedAt],
        );
        return 'opened' as const;
      });
    },
    async closeSession(key, at) {
      return inTransaction(pool, async (client) => {
        const found = await client.query<{ id: string; channel: string; connected_at: string }>(
          'SELECT id, channel, connected_at FROM listener_sessions WHERE server = $1 AND mount = $2 AND client_id = $3 AND disconnected_at IS NULL FOR UPDATE',
          [key.server, key.mount, key.clientId],
        );
        const session = found.rows[0];
        if (!session) return false;
        await closeRow(client, session, at);
        return true;
      });
    },
    async endedSince(key, since) {
      const result = await pool.query('SELECT 1 FROM listener_sessions WHERE server = $1 AND mount = $2 AND client_id = $3 AND disconnected_at >= $4 LIMIT 1', [
        key.server,
        key.mount,
        key.clientId,
        since,
      ]);
      return result.rows.length > 0;
    },
    ...createSessionSweeps(pool),
    async openSessions(server, mount): Promise<ListenerSession[]> {
      const result = await pool.query<SessionRow>(
        `SELECT ${SESSION_COLUMNS} FROM listener_sessions WHERE server = $1 AND mount = $2 AND disconnected_at IS NULL ORDER BY id`,
        [server, mount],
      );
      return result.rows.map(sessionFromRow);
    },
    ...createMountLiveStore(pool),
  };
}

/** When svc saw each mount live (table icecast_mounts, migration 14). */
function createMountLiveStore(pool: pg.Pool): Pick<PlayLogStore, 'mountLive' | 'markLive' | 'markEnded'> {
  return {
    async mountLive(server, mount): Promise<MountLive | undefined> {
      const result = await pool.query<{ live_since: string; ended_at: string | null }>(
        'SELECT live_since, ended_at FROM icecast_mounts WHERE server = $1 AND mount = $2',
        [server, mount],
      );
      const row = result.rows[0];
      return row ? { liveSince: row.live_since, endedAt: row.ended_at } : undefined;
    },
    async markLive(server, mount, since) {
      await pool.query(
        `INSERT INTO icecast_mounts (server, mount, live_since) VALUES ($1, $2, $3)
          ON CONFLICT (server, mount) DO UPDATE SET
            live_since = CASE WHEN icecast_mounts.ended_at IS NULL THEN least(icecast_mounts.live_since, excluded.live_since)
                              ELSE greatest(icecast_mounts.ended_at, excluded.live_since) END,
            ended_at = NULL`,
        [server, mount, since],
      );
    },
    async markEnded(server, mount, at) {
      await pool.query('UPDATE icecast_mounts SET ended_at = $1 WHERE server = $2 AND mount = $3 AND ended_at IS NULL', [at, server, mount]);
    },
  };
}

/** The longest closed session of a channel (of any, without one): sessions connected earlier can overlap only if still open. */
async function longestSessionMs(db: Queryable, channel: string | undefined): Promise<number> {
  const result =
    channel === undefined
      ? await db.query<{ longest_ms: string | null }>('SELECT max(longest_ms) AS longest_ms FROM listener_session_bounds')
      : await db.query<{ longest_ms: string | null }>('SELECT longest_ms FROM listener_session_bounds WHERE channel = $1', [channel]);
  return Number(result.rows[0]?.longest_ms ?? 0);
}

/** Sessions overlapping a range, page by page (the reports' read), through `db`: the pool, or a report snapshot's connection (report-snapshot.ts). */
export function createSessionPages(db: Queryable): Pick<PlayLogStore, 'sessionPages'> {
  const channelFilter = (channel: string | undefined, index: number) => (channel === undefined ? '' : `channel = $${index} AND `);
  const withChannel = (values: unknown[], channel: string | undefined) => (channel === undefined ? values : [...values, channel]);
  return {
    async *sessionPages(range) {
      // Sessions connected before `from` minus the longest closed one can overlap only if still open.
      const earliest = new Date(Date.parse(range.from) - (await longestSessionMs(db, range.channel))).toISOString();
      const openBefore = await db.query<SessionRow>(
        `SELECT ${SESSION_COLUMNS} FROM listener_sessions WHERE ${channelFilter(range.channel, 2)}disconnected_at IS NULL AND connected_at < $1 ORDER BY connected_at, id`,
        withChannel([earliest], range.channel),
      );
      if (openBefore.rows.length > 0) yield openBefore.rows.map(sessionFromRow);
      let after: [string, number] = [earliest, 0];
      for (;;) {
        const rows = await db.query<SessionRow>(
          `SELECT ${SESSION_COLUMNS} FROM listener_sessions
            WHERE ${channelFilter(range.channel, 6)}(connected_at, id) > ($1, $2) AND connected_at < $3 AND (disconnected_at IS NULL OR disconnected_at > $4)
            ORDER BY connected_at, id LIMIT $5`,
          withChannel([after[0], after[1], range.to, range.from, PLAY_PAGE], range.channel),
        );
        if (rows.rows.length > 0) yield rows.rows.map(sessionFromRow);
        const last = rows.rows[rows.rows.length - 1];
        if (!last || rows.rows.length < PLAY_PAGE) return;
        after = [last.connected_at, Number(last.id)];
      }
    },
  };
}

/** The sessions no listener_remove will close: past the bounded lifetime, or of an Icecast run that ended. */
function createSessionSweeps(pool: pg.Pool): Pick<PlayLogStore, 'closeOverdue' | 'closeEarlierRun'> {
  return {
    async closeOverdue(now, maxMs) {
      const before = new Date(Date.parse(now) - maxMs).toISOString();
      let closed = 0;
      for (;;) {
        const batch = await inTransaction(pool, async (client) => {
          const rows = await client.query<{ id: string; channel: string; connected_at: string }>(
            'SELECT id, channel, connected_at FROM listener_sessions WHERE disconnected_at IS NULL AND connected_at < $1 ORDER BY channel, id LIMIT 1000 FOR UPDATE SKIP LOCKED',
            [before],
          );
          for (const row of rows.rows) await closeRow(client, row, new Date(Date.parse(row.connected_at) + maxMs).toISOString());
          return rows.rows.length;
        });
        closed += batch;
        if (batch < 1000) return closed;
      }
    },
    async closeEarlierRun(server, mount, clientId, at) {
      return inTransaction(pool, async (client) => {
        const rows = await client.query<{ id: string; channel: string; connected_at: string }>(
          `SELECT id, channel, connected_at FROM listener_sessions
            WHERE server = $1 AND mount = $2 AND disconnected_at IS NULL
              AND (CASE WHEN client_id ~ '^[0-9]{1,20}$' THEN client_id::numeric END) > $3::numeric
            FOR UPDATE`,
          [server, mount, clientId],
        );
        for (const row of rows.rows) await closeRow(client, row, at);
        return rows.rows.length;
      });
    },
  };
}
