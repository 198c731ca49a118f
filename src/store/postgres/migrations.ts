import type { ClientBase } from 'pg';
import { VERSION } from '../../version';
import { pendingMigrations, refuseNewerSchema, type Migration, type MigrationReport } from '../migrations';

// Append-only schema history of the PostgreSQL store; `svc_schema` records what was applied.
// Several instances may start at once: the first takes an advisory lock and migrates, the
// others wait for it and then find nothing left to do (migratePostgres).

/** Any fixed number names the lock; every svc instance agrees on this one. */
const MIGRATION_LOCK = 0x5356_4301;

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tracks, images, lookup cache, request slots',
    sql: `
      CREATE TABLE tracks (
        -- One sequence for every instance: dbids are unique and increase, never reused.
        dbid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        received_seq bigint NOT NULL,
        -- ISO 8601 text, compared byte by byte (the C collation) as SQLite does: history pages are ranges on it.
        received_at text COLLATE "C" NOT NULL,
        stored_at timestamptz NOT NULL DEFAULT now(),
        -- json, not jsonb: the text keeps its key order, so /v1/last is the same on both backends.
        metadata json NOT NULL
      );
      CREATE INDEX tracks_by_received_seq ON tracks (received_seq);
      -- GET /v1/history: keyset pages newest first.
      CREATE INDEX tracks_by_received_at ON tracks (received_at, dbid);
      -- Arrival order across every instance; the current track is the highest one stored.
      CREATE SEQUENCE received_seq;

      CREATE TABLE images (
        key text PRIMARY KEY CHECK (length(key) = 64),
        mime_type text NOT NULL CHECK (mime_type IN ('image/jpeg', 'image/png', 'image/webp', 'image/gif')),
        size integer NOT NULL CHECK (size > 0),
        stored_at timestamptz NOT NULL DEFAULT now(),
        last_used bigint NOT NULL,
        -- Insertion order breaks ties of last_used, as SQLite's rowid does.
        seq bigint GENERATED ALWAYS AS IDENTITY
      );
      CREATE INDEX images_by_last_used ON images (last_used, seq);
      CREATE TABLE image_blobs (
        key text PRIMARY KEY REFERENCES images (key) ON DELETE CASCADE,
        bytes bytea NOT NULL
      );
      -- Images are compressed already; stored uncompressed, a piece is read without the whole.
      ALTER TABLE image_blobs ALTER COLUMN bytes SET STORAGE EXTERNAL;
      CREATE TABLE track_images (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        dbid bigint NOT NULL REFERENCES tracks (dbid) ON DELETE CASCADE,
        category text NOT NULL CHECK (category IN ('cover', 'fanart', 'banner', 'logo', 'thumbnail')),
        image_key text NOT NULL REFERENCES images (key) ON DELETE CASCADE,
        artist_key text NOT NULL,
        album_key text NOT NULL,
        source text NOT NULL,
        UNIQUE (dbid, category, image_key)
      );
      CREATE INDEX track_images_by_artist ON track_images (artist_key, category);
      CREATE INDEX track_images_by_album ON track_images (artist_key, album_key, category);
      CREATE INDEX track_images_by_key ON track_images (image_key);
      CREATE TABLE image_urls (
        url_sha256 text PRIMARY KEY,
        image_key text NOT NULL REFERENCES images (key) ON DELETE CASCADE,
        fetched_at bigint NOT NULL
      );
      CREATE INDEX image_urls_by_key ON image_urls (image_key);

      CREATE TABLE lookup_cache (
        service text NOT NULL,
        lookup_key text NOT NULL,
        found boolean NOT NULL,
        answer text,
        fetched_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        PRIMARY KEY (service, lookup_key)
      );
      CREATE INDEX lookup_cache_by_expiry ON lookup_cache (expires_at);

      -- The next moment (ms since the epoch, database clock) a request to a service may start:
      -- MusicBrainz's 1 request/s holds for every instance together.
      CREATE TABLE request_slots (
        service text PRIMARY KEY,
        next_at bigint NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'output deliveries',
    sql: `
      -- The outputs' delivery log (docs/outputs.md "Delivery"); times are ms since the epoch.
      CREATE TABLE output_messages (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        output text NOT NULL,
        dbid bigint NOT NULL,
        kind text NOT NULL CHECK (kind IN ('track.changed', 'track.settled', 'track.deleted')),
        message_id text NOT NULL UNIQUE,
        payload text NOT NULL,
        created_at bigint NOT NULL,
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed', 'superseded')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at bigint NOT NULL,
        claimed_by text,
        claimed_until bigint,
        finished_at bigint,
        receipt text,
        last_error text,
        -- Every instance sees each change: the first to enqueue it wins, the others add nothing.
        UNIQUE (output, dbid, kind)
      );
      CREATE INDEX output_messages_queue ON output_messages (output, state, id);
      CREATE INDEX output_messages_finished ON output_messages (finished_at) WHERE state <> 'pending';
      CREATE TABLE output_attempts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        message bigint NOT NULL REFERENCES output_messages (id) ON DELETE CASCADE,
        at bigint NOT NULL,
        duration_ms integer NOT NULL,
        outcome text NOT NULL CHECK (outcome IN ('delivered', 'failed', 'retry')),
        status integer,
        error text
      );
      CREATE INDEX output_attempts_by_message ON output_attempts (message);
    `,
  },
  {
    version: 3,
    name: 'idempotency keys',
    sql: `
      -- Idempotency-Key (docs/limits-and-load.md "Idempotency and retries"): the first answer to a key, kept
      -- 24 h, shared by every instance. status and body are NULL while the first request runs.
      CREATE TABLE idempotency_keys (
        key text PRIMARY KEY,
        fingerprint text NOT NULL,
        status integer,
        body text,
        created_at bigint NOT NULL
      );
      CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
    `,
  },
  {
    version: 4,
    name: 'output changes',
    sql: `
      -- A record event is one row, whatever the number of outputs: the write a submission waits
      -- for. Each output's cursor moves the changes after it into its queue (docs/outputs.md
      -- "Delivery"); instances take turns with an advisory lock.
      CREATE TABLE output_changes (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        event text NOT NULL CHECK (event IN ('changed', 'settled', 'deleted', 'restored')),
        dbid bigint NOT NULL,
        payload text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE TABLE output_cursors (
        output text PRIMARY KEY,
        change_id bigint NOT NULL
      );
      DROP INDEX output_messages_queue;
      DROP INDEX output_messages_finished;
      CREATE INDEX output_messages_pending ON output_messages (output, id) WHERE state = 'pending';
      CREATE INDEX output_messages_finished ON output_messages (output, finished_at) WHERE state <> 'pending';
    `,
  },
  {
    version: 5,
    name: 'delivery promises',
    sql: `
      -- As SQLite's migration 8 (store/sqlite/migrations.ts): held messages, what a current-state
      -- target was shown, superseded counts, the last test, and the dbid an idempotency key stored.
      ALTER TABLE output_messages ADD COLUMN held_until bigint;
      ALTER TABLE output_cursors ADD COLUMN shown_dbid bigint NOT NULL DEFAULT 0;
      ALTER TABLE output_cursors ADD COLUMN superseded bigint NOT NULL DEFAULT 0;
      ALTER TABLE output_cursors ADD COLUMN tested_at bigint;
      ALTER TABLE output_cursors ADD COLUMN test_dbid bigint;
      ALTER TABLE output_cursors ADD COLUMN test_error text;
      ALTER TABLE idempotency_keys ADD COLUMN dbid bigint;
      ALTER TABLE idempotency_keys ADD COLUMN owner text;
    `,
  },
  {
    version: 6,
    name: 'play log',
    sql: `
      -- The play log (docs/play-log.md), as in SQLite's migration 9. Times are ISO 8601 UTC text
      -- with milliseconds in the C collation, as received_at.
      ALTER TABLE tracks ADD COLUMN started_at text COLLATE "C";
      ALTER TABLE tracks ADD COLUMN ended_at text COLLATE "C";
      ALTER TABLE tracks ADD COLUMN end_reason text CHECK (end_reason IS NULL OR end_reason IN ('next', 'explicit', 'source_disconnect', 'duration'));
      ALTER TABLE tracks ADD COLUMN planned_end_at text COLLATE "C";
      ALTER TABLE tracks ADD COLUMN channel text NOT NULL DEFAULT 'main';
      ALTER TABLE tracks ADD COLUMN kind text NOT NULL DEFAULT 'music' CHECK (kind IN ('music', 'jingle', 'id', 'ad', 'talk', 'bed', 'unknown'));
      ALTER TABLE tracks ADD COLUMN usage text NOT NULL DEFAULT 'feature' CHECK (usage IN ('feature', 'theme', 'background'));
      ALTER TABLE tracks ADD COLUMN dj text;
      ALTER TABLE tracks ADD COLUMN show text;
      ALTER TABLE tracks ADD COLUMN trimmed_seconds double precision;
      ALTER TABLE tracks ADD COLUMN listeners json;
      ALTER TABLE tracks ADD COLUMN listeners_done boolean NOT NULL DEFAULT false;
      UPDATE tracks SET started_at = received_at, listeners_done = true;
      UPDATE tracks t SET ended_at = n.next_at, end_reason = CASE WHEN n.next_at IS NULL THEN NULL ELSE 'next' END
        FROM (SELECT dbid, lead(received_at) OVER (ORDER BY received_at, dbid) AS next_at FROM tracks) n
        WHERE n.dbid = t.dbid;
      CREATE INDEX tracks_by_channel_start ON tracks (channel, started_at, dbid);
      CREATE INDEX tracks_by_start ON tracks (started_at, dbid);
      CREATE INDEX tracks_on_air ON tracks (channel) WHERE ended_at IS NULL;
      CREATE INDEX tracks_to_count ON tracks (dbid) WHERE NOT listeners_done AND ended_at IS NOT NULL;

      CREATE TABLE listener_sessions (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        channel text NOT NULL,
        source text NOT NULL CHECK (source IN ('auth', 'poll')),
        server text NOT NULL,
        mount text NOT NULL,
        client_id text NOT NULL,
        address text NOT NULL,
        user_agent text NOT NULL DEFAULT '',
        connected_at text COLLATE "C" NOT NULL,
        disconnected_at text COLLATE "C"
      );
      -- With disconnected_at: the overlap of a play is read from the index alone.
      CREATE INDEX listener_sessions_by_start ON listener_sessions (channel, connected_at, disconnected_at);
      CREATE INDEX listener_sessions_open_by_channel ON listener_sessions (channel, connected_at) WHERE disconnected_at IS NULL;
      CREATE INDEX listener_sessions_open ON listener_sessions (server, mount, client_id) WHERE disconnected_at IS NULL;
      CREATE TABLE listener_session_bounds (
        channel text PRIMARY KEY,
        longest_ms bigint NOT NULL
      );
      CREATE TABLE playlog_keys (
        name text PRIMARY KEY,
        value text NOT NULL
      );
      INSERT INTO playlog_keys (name, value) VALUES ('address', md5(random()::text) || md5(random()::text));
    `,
  },
  {
    version: 7,
    name: 'song requests',
    sql: `
      -- The song-request queue (docs/song-requests.md), oldest first by id, shared by every
      -- instance. Times are ms since the epoch.
      CREATE TABLE song_requests (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        requester text NOT NULL,
        artist text,
        title text,
        normalized_artist text NOT NULL,
        normalized_title text NOT NULL,
        origin text NOT NULL,
        user_platform text,
        external_id text,
        user_input text,
        requested_for text,
        created_at bigint NOT NULL
      );
      CREATE INDEX song_requests_by_identity ON song_requests (normalized_artist, normalized_title);
    `,
  },
  {
    version: 8,
    name: 'store keys',
    sql: `
      -- Random keys of this database (docs/security.md "Secrets at rest"): the idempotency
      -- fingerprints are HMACs under one of them, never a plain hash of what a request carried.
      -- The key is made by the first instance that needs it (crypto.randomBytes), not here.
      CREATE TABLE store_keys (
        name text PRIMARY KEY,
        value bytea NOT NULL
      );
      -- Fingerprints written before were plain SHA-256 of requests that carry the secret.
      DELETE FROM idempotency_keys;
    `,
  },
  {
    version: 10,
    name: 'reports',
    sql: `
      -- Reports read every channel's sessions in connection order, page by page
      -- (docs/reports.md "Memory and speed") as in SQLite's migration 13: without this index each page sorted the table.
      CREATE INDEX listener_sessions_by_connected ON listener_sessions (connected_at, id);
    `,
  },
  {
    version: 11,
    name: 'report columns',
    sql: `
      -- What a report groups and sifts a play by, as in SQLite's migration 14 (docs/reports.md
      -- "Memory and speed"): computed by svc from the metadata (src/domain/recording.ts) when a
      -- play is written; rows without them, or of an older report_version, get them before a
      -- report reads their range.
      ALTER TABLE tracks ADD COLUMN recording_key text COLLATE "C";
      ALTER TABLE tracks ADD COLUMN spelling_key text COLLATE "C";
      ALTER TABLE tracks ADD COLUMN report_marks integer NOT NULL DEFAULT 0;
      ALTER TABLE tracks ADD COLUMN report_version integer;
    `,
  },
  {
    version: 12,
    name: 'play corrections',
    sql: `
      -- The audit trail of corrections, as in SQLite's migration 15 (PATCH /v1/history/<dbid>,
      -- docs/http-api.md): one row per correction, appended and never changed. changes is json, not
      -- jsonb: its fields keep the order SQLite's text keeps.
      CREATE TABLE play_corrections (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        dbid bigint NOT NULL REFERENCES tracks (dbid) ON DELETE CASCADE,
        corrected_at text COLLATE "C" NOT NULL,
        corrected_by text NOT NULL,
        changes json NOT NULL
      );
      CREATE INDEX play_corrections_by_dbid ON play_corrections (dbid, id);
      CREATE INDEX play_corrections_by_time ON play_corrections (corrected_at);
      `,
  },
  {
    version: 13,
    name: 'recognition library',
    sql: `
      -- The audio files svc recognises, as in SQLite's migration 16 (docs/recognition.md "The library").
      CREATE TABLE library_tracks (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        path text COLLATE "C" NOT NULL UNIQUE,
        size bigint NOT NULL,
        mtime_ms bigint NOT NULL,
        duration_seconds double precision NOT NULL,
        tags text NOT NULL,
        items integer NOT NULL,
        fingerprint bytea NOT NULL,
        added_at bigint NOT NULL
      );
    `,
  },
  {
    version: 14,
    name: 'plausible listener sessions',
    sql: `
      -- As SQLite's migration 17 (docs/play-log.md "Sessions that must be plausible").
      CREATE TABLE icecast_mounts (
        server text NOT NULL,
        mount text NOT NULL,
        live_since text COLLATE "C" NOT NULL,
        ended_at text COLLATE "C",
        PRIMARY KEY (server, mount)
      );
      CREATE INDEX listener_sessions_by_key ON listener_sessions (server, mount, client_id, disconnected_at);
      CREATE INDEX listener_sessions_open_by_start ON listener_sessions (connected_at) WHERE disconnected_at IS NULL;
      DROP TABLE playlog_keys;
    `,
  },
  {
    version: 15,
    name: 'open listener counts',
    sql: `
      -- As SQLite's migration 18 (docs/play-log.md "Counting a play's listeners"): the open
      -- sessions counted per mount, per channel and per listener by triggers, on every path that
      -- writes a session. Each trigger takes the channel's row first, so the writers of one channel
      -- queue there and a listener's earliest open session is read after the others' commits.
      CREATE TABLE listener_open_mounts (
        server text NOT NULL,
        mount text NOT NULL,
        sessions bigint NOT NULL,
        PRIMARY KEY (server, mount)
      );
      CREATE TABLE listener_open_channels (
        channel text PRIMARY KEY,
        sessions bigint NOT NULL,
        listeners bigint NOT NULL
      );
      CREATE TABLE listener_open_listeners (
        channel text NOT NULL,
        address text NOT NULL,
        user_agent text NOT NULL,
        sessions bigint NOT NULL,
        earliest_open text COLLATE "C" NOT NULL,
        PRIMARY KEY (channel, address, user_agent)
      );
      CREATE INDEX listener_open_listeners_by_earliest ON listener_open_listeners (channel, earliest_open);
      CREATE INDEX listener_sessions_open_by_listener ON listener_sessions (channel, address, user_agent, connected_at) WHERE disconnected_at IS NULL;
      CREATE INDEX listener_sessions_closed_by_end ON listener_sessions (channel, disconnected_at, connected_at) WHERE disconnected_at IS NOT NULL;

      INSERT INTO listener_open_mounts (server, mount, sessions)
        SELECT server, mount, count(*) FROM listener_sessions WHERE disconnected_at IS NULL GROUP BY server, mount;
      INSERT INTO listener_open_listeners (channel, address, user_agent, sessions, earliest_open)
        SELECT channel, address, user_agent, count(*), min(connected_at) FROM listener_sessions WHERE disconnected_at IS NULL
         GROUP BY channel, address, user_agent;
      INSERT INTO listener_open_channels (channel, sessions, listeners)
        SELECT channel, sum(sessions), count(*) FROM listener_open_listeners GROUP BY channel;

      CREATE FUNCTION listener_session_opened() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        now_open bigint;
      BEGIN
        INSERT INTO listener_open_channels (channel, sessions, listeners) VALUES (NEW.channel, 1, 0)
          ON CONFLICT (channel) DO UPDATE SET sessions = listener_open_channels.sessions + 1;
        INSERT INTO listener_open_mounts (server, mount, sessions) VALUES (NEW.server, NEW.mount, 1)
          ON CONFLICT (server, mount) DO UPDATE SET sessions = listener_open_mounts.sessions + 1;
        INSERT INTO listener_open_listeners (channel, address, user_agent, sessions, earliest_open)
          VALUES (NEW.channel, NEW.address, NEW.user_agent, 1, NEW.connected_at)
          ON CONFLICT (channel, address, user_agent) DO UPDATE
            SET sessions = listener_open_listeners.sessions + 1, earliest_open = least(listener_open_listeners.earliest_open, excluded.earliest_open)
          RETURNING sessions INTO now_open;
        IF now_open = 1 THEN
          UPDATE listener_open_channels SET listeners = listeners + 1 WHERE channel = NEW.channel;
        END IF;
        RETURN NULL;
      END $$;
      CREATE FUNCTION listener_session_closed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        still_open bigint;
      BEGIN
        UPDATE listener_open_channels SET sessions = sessions - 1 WHERE channel = OLD.channel;
        UPDATE listener_open_mounts SET sessions = sessions - 1 WHERE server = OLD.server AND mount = OLD.mount;
        UPDATE listener_open_listeners
           SET sessions = sessions - 1,
               earliest_open = coalesce((SELECT min(connected_at) FROM listener_sessions
                                          WHERE channel = OLD.channel AND address = OLD.address AND user_agent = OLD.user_agent
                                            AND disconnected_at IS NULL), earliest_open)
         WHERE channel = OLD.channel AND address = OLD.address AND user_agent = OLD.user_agent
         RETURNING sessions INTO still_open;
        IF still_open = 0 THEN
          DELETE FROM listener_open_listeners WHERE channel = OLD.channel AND address = OLD.address AND user_agent = OLD.user_agent;
          UPDATE listener_open_channels SET listeners = listeners - 1 WHERE channel = OLD.channel;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER listener_session_opened AFTER INSERT ON listener_sessions
        FOR EACH ROW WHEN (NEW.disconnected_at IS NULL) EXECUTE FUNCTION listener_session_opened();
      CREATE TRIGGER listener_session_closed AFTER UPDATE OF disconnected_at ON listener_sessions
        FOR EACH ROW WHEN (OLD.disconnected_at IS NULL AND NEW.disconnected_at IS NOT NULL) EXECUTE FUNCTION listener_session_closed();
      -- TRUNCATE fires no row trigger: the totals go with the sessions.
      CREATE FUNCTION listener_sessions_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM listener_open_mounts;
        DELETE FROM listener_open_channels;
        DELETE FROM listener_open_listeners;
        RETURN NULL;
      END $$;
      CREATE TRIGGER listener_sessions_truncated AFTER TRUNCATE ON listener_sessions
        FOR EACH STATEMENT EXECUTE FUNCTION listener_sessions_truncated();

      -- As SQLite's migration 18: idempotency keys' counted bytes and totals.
      ALTER TABLE idempotency_keys ADD COLUMN counted_bytes bigint GENERATED ALWAYS AS (coalesce(length(body), 0) + length(key) + length(fingerprint) + 64) STORED;
      CREATE INDEX idempotency_keys_oldest ON idempotency_keys (created_at, key);
      CREATE TABLE idempotency_totals (
        id integer PRIMARY KEY CHECK (id = 1),
        entries bigint NOT NULL,
        bytes bigint NOT NULL
      );
      INSERT INTO idempotency_totals (id, entries, bytes) SELECT 1, count(*), coalesce(sum(counted_bytes), 0) FROM idempotency_keys;
      CREATE FUNCTION idempotency_key_counted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          UPDATE idempotency_totals SET entries = entries + 1, bytes = bytes + NEW.counted_bytes WHERE id = 1;
        ELSIF TG_OP = 'UPDATE' THEN
          UPDATE idempotency_totals SET bytes = bytes + NEW.counted_bytes - OLD.counted_bytes WHERE id = 1;
        ELSE
          UPDATE idempotency_totals SET entries = entries - 1, bytes = bytes - OLD.counted_bytes WHERE id = 1;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER idempotency_key_counted AFTER INSERT OR DELETE ON idempotency_keys
        FOR EACH ROW EXECUTE FUNCTION idempotency_key_counted();
      -- Only an answer changes a row's bytes: storing a key's dbid (tracks.ts) never waits on the totals.
      CREATE TRIGGER idempotency_key_recounted AFTER UPDATE ON idempotency_keys
        FOR EACH ROW WHEN (OLD.counted_bytes IS DISTINCT FROM NEW.counted_bytes) EXECUTE FUNCTION idempotency_key_counted();
      CREATE FUNCTION idempotency_keys_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE idempotency_totals SET entries = 0, bytes = 0 WHERE id = 1;
        RETURN NULL;
      END $$;
      CREATE TRIGGER idempotency_keys_truncated AFTER TRUNCATE ON idempotency_keys
        FOR EACH STATEMENT EXECUTE FUNCTION idempotency_keys_truncated();
    `,
  },
];

/**
 * Applies the pending migrations in one transaction under a transaction-level advisory lock
 * (docs/several-instances.md "PgBouncer"): the lock ends with the transaction on every path
 * (commit, rollback, a dropped connection), and a transaction keeps one server connection, so it
 * holds through a transaction-mode pooler as well as on a direct connection. Instances starting
 * together wait for the first, then find nothing left to do.
 */
export async function migratePostgres(client: ClientBase, migrations: readonly Migration[] = POSTGRES_MIGRATIONS, onMigrated?: MigrationReport): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS svc_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const applied = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM svc_schema');
    const current = applied.rows[0]?.version ?? 0;
    refuseNewerSchema(current, migrations, 'PostgreSQL', VERSION);
    const pending = pendingMigrations(migrations, current);
    for (const migration of pending) {
      await client.query(migration.sql);
      await client.query('INSERT INTO svc_schema (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    }
    await client.query('COMMIT');
    const last = pending.at(-1);
    if (last) onMigrated?.(current, last.version);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
