// SQLite's append-only schema history. `PRAGMA user_version` records the last version applied;
// never edit a released migration, add the next one.

import type { Migration } from '../migrations';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tracks',
    sql: `
      CREATE TABLE tracks (
        -- AUTOINCREMENT: a dbid is never reused, even after the newest row is deleted.
        dbid INTEGER PRIMARY KEY AUTOINCREMENT,
        -- Arrival order of the submission; the current track is the highest one stored.
        received_seq INTEGER NOT NULL,
        received_at TEXT NOT NULL,
        stored_at TEXT NOT NULL,
        -- processed_metadata as JSON, so a history can be served without a migration.
        metadata TEXT NOT NULL CHECK (json_valid(metadata))
      );
      CREATE INDEX tracks_by_received_seq ON tracks (received_seq);
    `,
  },
  {
    version: 2,
    name: 'images',
    sql: `
      -- Content-addressed images (docs/streams.md "The image store"): key = SHA-256 of the bytes, hex.
      CREATE TABLE images (
        key TEXT PRIMARY KEY CHECK (length(key) = 64),
        mime_type TEXT NOT NULL CHECK (mime_type IN ('image/jpeg', 'image/png', 'image/webp', 'image/gif')),
        size INTEGER NOT NULL CHECK (size > 0),
        stored_at TEXT NOT NULL,
        -- Milliseconds since the epoch; the least recently used images are evicted first.
        last_used INTEGER NOT NULL
      );
      CREATE INDEX images_by_last_used ON images (last_used);
      -- The bytes apart from the metadata, so size sums and LRU scans never read blobs.
      CREATE TABLE image_blobs (
        key TEXT PRIMARY KEY NOT NULL REFERENCES images (key) ON DELETE CASCADE,
        bytes BLOB NOT NULL
      );
      -- Which images belong to which track, by category; the id keeps the order they arrived in.
      CREATE TABLE track_images (
        id INTEGER PRIMARY KEY,
        dbid INTEGER NOT NULL REFERENCES tracks (dbid) ON DELETE CASCADE,
        category TEXT NOT NULL CHECK (category IN ('cover', 'fanart', 'banner', 'logo', 'thumbnail')),
        image_key TEXT NOT NULL REFERENCES images (key) ON DELETE CASCADE,
        -- Normalized artist and album names, for the image clients' get_images/list_images.
        artist_key TEXT NOT NULL,
        album_key TEXT NOT NULL,
        source TEXT NOT NULL,
        UNIQUE (dbid, category, image_key)
      );
      CREATE INDEX track_images_by_artist ON track_images (artist_key, category);
      CREATE INDEX track_images_by_album ON track_images (artist_key, album_key, category);
      CREATE INDEX track_images_by_key ON track_images (image_key);
      -- Provider image URLs already downloaded (content URLs do not change), so a known one is
      -- linked again without a second download. Only a SHA-256 of the URL is kept (a URL may
      -- carry a token). Submitted cover URLs are never remembered: they may change content.
      CREATE TABLE image_urls (
        url_sha256 TEXT PRIMARY KEY,
        image_key TEXT NOT NULL REFERENCES images (key) ON DELETE CASCADE,
        fetched_at INTEGER NOT NULL
      );
      CREATE INDEX image_urls_by_key ON image_urls (image_key);
    `,
  },
  {
    version: 3,
    name: 'lookup cache',
    sql: `
      -- Answers of outside services (docs/enrichment.md): found ones for 7 days, "not found" for 1 day.
      CREATE TABLE lookup_cache (
        service TEXT NOT NULL,
        lookup_key TEXT NOT NULL,
        found INTEGER NOT NULL CHECK (found IN (0, 1)),
        -- The decoded answer as JSON; NULL when the service said "not found".
        answer TEXT CHECK (answer IS NULL OR json_valid(answer)),
        fetched_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (service, lookup_key)
      ) WITHOUT ROWID;
      CREATE INDEX lookup_cache_by_expiry ON lookup_cache (expires_at);
    `,
  },
  {
    version: 4,
    name: 'history index',
    sql: `
      -- GET /v1/history (docs/http-api.md): newest first by received time, dbid breaking ties. Keyset
      -- pages walk this index from a (received_at, dbid) bound, so a page costs the same at any
      -- table size; since/until are ranges on the same index.
      CREATE INDEX tracks_by_received_at ON tracks (received_at, dbid);
    `,
  },
  {
    version: 5,
    name: 'output deliveries',
    sql: `
      -- The outputs' delivery log (docs/outputs.md "Delivery"). No reference to tracks: a
      -- deleted record's track.deleted message outlives it. Times are ms since the epoch.
      CREATE TABLE output_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        output TEXT NOT NULL,
        dbid INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('track.changed', 'track.settled', 'track.deleted')),
        message_id TEXT NOT NULL UNIQUE,
        payload TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed', 'superseded')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        claimed_by TEXT,
        claimed_until INTEGER,
        finished_at INTEGER,
        receipt TEXT,
        last_error TEXT,
        -- Several instances that see one change enqueue it once.
        UNIQUE (output, dbid, kind)
      );
      CREATE INDEX output_messages_queue ON output_messages (output, state, id);
      CREATE INDEX output_messages_finished ON output_messages (finished_at) WHERE state <> 'pending';
      CREATE TABLE output_attempts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        message INTEGER NOT NULL REFERENCES output_messages (id) ON DELETE CASCADE,
        at INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'retry')),
        status INTEGER,
        error TEXT
      );
      CREATE INDEX output_attempts_by_message ON output_attempts (message);
    `,
  },
  {
    version: 6,
    name: 'idempotency keys',
    sql: `
      -- Idempotency-Key (docs/limits-and-load.md "Idempotency and retries"): the first answer to a key, kept
      -- 24 h. status and body are NULL while the first request is still being processed.
      -- Times are ms since the epoch.
      CREATE TABLE idempotency_keys (
        key TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        status INTEGER,
        body TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
    `,
  },
  {
    version: 7,
    name: 'output changes',
    sql: `
      -- A record event is one row, whatever the number of outputs: the write a submission waits
      -- for. Each output's cursor moves the changes after it into its queue (docs/outputs.md
      -- "Delivery"). Times are ms since the epoch.
      CREATE TABLE output_changes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        event TEXT NOT NULL CHECK (event IN ('changed', 'settled', 'deleted', 'restored')),
        dbid INTEGER NOT NULL,
        payload TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE output_cursors (
        output TEXT PRIMARY KEY,
        change_id INTEGER NOT NULL
      );
      -- Only the pending messages, per output in queue order: a few pages, whatever the history,
      -- so queueing a change touches few pages. Finished ones are looked up per output by time.
      DROP INDEX output_messages_queue;
      DROP INDEX output_messages_finished;
      CREATE INDEX output_messages_pending ON output_messages (output, id) WHERE state = 'pending';
      CREATE INDEX output_messages_finished ON output_messages (output, finished_at) WHERE state <> 'pending';
    `,
  },
  {
    version: 8,
    name: 'delivery promises',
    sql: `
      -- docs/outputs.md "Delivery" and docs/decisions.md "Delivery promises". A message made from a
      -- record still being enriched is held (held_until, ms since the epoch) until its enrichment
      -- ends or that time passes; it holds the messages behind it in its output's queue.
      ALTER TABLE output_messages ADD COLUMN held_until INTEGER;
      -- Per output: the newest dbid a current-state target was shown (never one older after it),
      -- how many messages were skipped for a newer one, and the last svc outputs test.
      ALTER TABLE output_cursors ADD COLUMN shown_dbid INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE output_cursors ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE output_cursors ADD COLUMN tested_at INTEGER;
      ALTER TABLE output_cursors ADD COLUMN test_dbid INTEGER;
      ALTER TABLE output_cursors ADD COLUMN test_error TEXT;
      -- The record a key's request stored, written with the record: a retry after the instance
      -- died is answered with it, never stored twice; owner: the svc process running the request.
      ALTER TABLE idempotency_keys ADD COLUMN dbid INTEGER;
      ALTER TABLE idempotency_keys ADD COLUMN owner TEXT;
    `,
  },
  {
    version: 9,
    name: 'play log',
    sql: `
      -- The play log (docs/play-log.md): air times, kind, channel and people of each play, kept in
      -- columns so reports read ranges without parsing the metadata. Times are ISO 8601 UTC text
      -- with milliseconds, as received_at.
      ALTER TABLE tracks ADD COLUMN started_at TEXT;
      ALTER TABLE tracks ADD COLUMN ended_at TEXT;
      ALTER TABLE tracks ADD COLUMN end_reason TEXT CHECK (end_reason IS NULL OR end_reason IN ('next', 'explicit', 'source_disconnect', 'duration'));
      ALTER TABLE tracks ADD COLUMN planned_end_at TEXT;
      ALTER TABLE tracks ADD COLUMN channel TEXT NOT NULL DEFAULT 'main';
      ALTER TABLE tracks ADD COLUMN kind TEXT NOT NULL DEFAULT 'music' CHECK (kind IN ('music', 'jingle', 'id', 'ad', 'talk', 'bed', 'unknown'));
      ALTER TABLE tracks ADD COLUMN usage TEXT NOT NULL DEFAULT 'feature' CHECK (usage IN ('feature', 'theme', 'background'));
      ALTER TABLE tracks ADD COLUMN dj TEXT;
      ALTER TABLE tracks ADD COLUMN show TEXT;
      ALTER TABLE tracks ADD COLUMN trimmed_seconds REAL;
      -- {atp, listener_seconds, peak} as JSON once the play has ended and been counted.
      ALTER TABLE tracks ADD COLUMN listeners TEXT CHECK (listeners IS NULL OR json_valid(listeners));
      -- 1 once the listeners of an ended play were counted (or there was nothing to count them from).
      ALTER TABLE tracks ADD COLUMN listeners_done INTEGER NOT NULL DEFAULT 0;
      -- Earlier plays aired from their arrival until the next arrival (one channel then).
      UPDATE tracks SET started_at = received_at, listeners_done = 1;
      UPDATE tracks SET ended_at = (
          SELECT n.received_at FROM tracks n WHERE (n.received_at, n.dbid) > (tracks.received_at, tracks.dbid)
          ORDER BY n.received_at, n.dbid LIMIT 1),
        end_reason = 'next';
      UPDATE tracks SET end_reason = NULL WHERE ended_at IS NULL;
      CREATE INDEX tracks_by_channel_start ON tracks (channel, started_at, dbid);
      CREATE INDEX tracks_by_start ON tracks (started_at, dbid);
      CREATE INDEX tracks_on_air ON tracks (channel) WHERE ended_at IS NULL;
      CREATE INDEX tracks_to_count ON tracks (dbid) WHERE listeners_done = 0 AND ended_at IS NOT NULL;

      -- Listener sessions from the Icecast server the audience listens to (docs/play-log.md
      -- "Listener sessions"). address is a keyed hash unless playlog.keepAddresses is set.
      CREATE TABLE listener_sessions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        channel TEXT NOT NULL,
        -- 'auth' (Icecast's URL authentication) or 'poll' (/admin/listclients).
        source TEXT NOT NULL CHECK (source IN ('auth', 'poll')),
        server TEXT NOT NULL,
        mount TEXT NOT NULL,
        -- Icecast's client id, unique per server while it runs.
        client_id TEXT NOT NULL,
        address TEXT NOT NULL,
        user_agent TEXT NOT NULL DEFAULT '',
        connected_at TEXT NOT NULL,
        disconnected_at TEXT
      );
      -- With disconnected_at: the overlap of a play is read from the index alone.
      CREATE INDEX listener_sessions_by_start ON listener_sessions (channel, connected_at, disconnected_at);
      -- The listeners still connected, per channel: they overlap every play after they joined.
      CREATE INDEX listener_sessions_open_by_channel ON listener_sessions (channel, connected_at) WHERE disconnected_at IS NULL;
      CREATE INDEX listener_sessions_open ON listener_sessions (server, mount, client_id) WHERE disconnected_at IS NULL;
      -- The longest closed session per channel: the sessions overlapping a play are then a range on
      -- connected_at, whatever the size of the table.
      CREATE TABLE listener_session_bounds (
        channel TEXT PRIMARY KEY,
        longest_ms INTEGER NOT NULL
      );
      -- The key of the address hash, made once per database.
      CREATE TABLE playlog_keys (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
      INSERT INTO playlog_keys (name, value) VALUES ('address', lower(hex(randomblob(32))));
    `,
  },
  {
    version: 10,
    name: 'song requests',
    sql: `
      -- The song-request queue (docs/song-requests.md), oldest first by id. Times are ms since
      -- the epoch. normalized_* are the names as requests compare them.
      CREATE TABLE song_requests (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        requester TEXT NOT NULL,
        artist TEXT,
        title TEXT,
        normalized_artist TEXT NOT NULL,
        normalized_title TEXT NOT NULL,
        origin TEXT NOT NULL,
        user_platform TEXT,
        external_id TEXT,
        user_input TEXT,
        requested_for TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX song_requests_by_identity ON song_requests (normalized_artist, normalized_title);
    `,
  },
  {
    version: 11,
    name: 'store keys',
    sql: `
      -- Random keys of this database (docs/security.md "Secrets at rest"): the idempotency
      -- fingerprints are HMACs under one of them, never a plain hash of what a request carried.
      -- The key is made by svc on first use, not here (SQLite has no strong random source).
      CREATE TABLE store_keys (
        name TEXT PRIMARY KEY,
        value BLOB NOT NULL
      );
      -- Fingerprints written before were plain SHA-256 of requests that carry the secret.
      DELETE FROM idempotency_keys;
    `,
  },
  {
    version: 13,
    name: 'reports',
    sql: `
      -- Reports read every channel's sessions in connection order, page by page
      -- (docs/reports.md "Memory and speed"): without this index each page sorted the table.
      CREATE INDEX listener_sessions_by_connected ON listener_sessions (connected_at, id);
    `,
  },
  {
    version: 14,
    name: 'report columns',
    sql: `
      -- What a report groups and sifts a play by (docs/reports.md "Memory and speed"), computed by
      -- svc from the metadata (src/domain/recording.ts) when a play is written; rows without them,
      -- or of an older report_version, get them before a report reads their range.
      ALTER TABLE tracks ADD COLUMN recording_key TEXT;
      ALTER TABLE tracks ADD COLUMN spelling_key TEXT;
      ALTER TABLE tracks ADD COLUMN report_marks INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE tracks ADD COLUMN report_version INTEGER;
      -- A report's passes read a month from this index alone (the census's first plays and the
      -- plays with a problem excepted): a few hundred KiB a month, where the rows with their
      -- metadata are several MiB and the page cache is 2 MiB (database.ts).
      CREATE INDEX tracks_for_reports ON tracks (started_at, dbid, kind, channel, ended_at, trimmed_seconds, report_marks, report_version, recording_key, spelling_key, listeners);
    `,
  },
  {
    version: 15,
    name: 'play corrections',
    sql: `
      -- The audit trail of corrections (PATCH /v1/history/<dbid>, docs/http-api.md): one row per
      -- correction, appended and never changed; changes is a JSON object of field -> before, after.
      -- A record's corrections go with it when it is deleted.
      CREATE TABLE play_corrections (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        dbid INTEGER NOT NULL REFERENCES tracks (dbid) ON DELETE CASCADE,
        corrected_at TEXT NOT NULL,
        corrected_by TEXT NOT NULL,
        changes TEXT NOT NULL
      );
      CREATE INDEX play_corrections_by_dbid ON play_corrections (dbid, id);
      -- The check lists the corrected plays of a range.
      CREATE INDEX play_corrections_by_time ON play_corrections (corrected_at);
      `,
  },
  {
    version: 16,
    name: 'recognition library',
    sql: `
      -- The audio files svc recognises (docs/recognition.md "The library"): a file's size and
      -- modification time make adding incremental; the fingerprint is Chromaprint's raw items,
      -- little-endian 32-bit (store/library.ts); tags is a JSON object of the kept tags.
      CREATE TABLE library_tracks (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        size INTEGER NOT NULL,
        mtime_ms INTEGER NOT NULL,
        duration_seconds REAL NOT NULL,
        tags TEXT NOT NULL,
        items INTEGER NOT NULL,
        fingerprint BLOB NOT NULL,
        added_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 17,
    name: 'plausible listener sessions',
    sql: `
      -- When svc saw each Icecast mount live (docs/play-log.md "Sessions that must be plausible"):
      -- the current or last live stretch, from live_since until ended_at (NULL: still live). A
      -- listener_remove for a session never seen open starts no earlier than live_since.
      CREATE TABLE icecast_mounts (
        server TEXT NOT NULL,
        mount TEXT NOT NULL,
        live_since TEXT NOT NULL,
        ended_at TEXT,
        PRIMARY KEY (server, mount)
      );
      -- A listener_remove again for a session that ended already is a replay: found by its key.
      CREATE INDEX listener_sessions_by_key ON listener_sessions (server, mount, client_id, disconnected_at);
      -- Open sessions past playlog.sessionMaxHours, oldest first.
      CREATE INDEX listener_sessions_open_by_start ON listener_sessions (connected_at) WHERE disconnected_at IS NULL;
      -- The address hash's key leaves the database it protects (pipeline/listener-sessions.ts
      -- addressKeyFrom): the hashes made with it cannot be reversed once it is gone.
      DROP TABLE playlog_keys;
    `,
  },
  {
    version: 18,
    name: 'open listener counts',
    sql: `
      -- The open sessions counted as they open and close (docs/play-log.md "Counting a play's
      -- listeners"), kept by the triggers below on every path that writes a session: the cap per
      -- mount reads one row, and a play's end reads the sessions open since it started (or
      -- since playlog.minSessionSeconds) and these totals, never every open session.
      CREATE TABLE listener_open_mounts (
        server TEXT NOT NULL,
        mount TEXT NOT NULL,
        sessions INTEGER NOT NULL,
        PRIMARY KEY (server, mount)
      );
      -- sessions: open sessions of the channel; listeners: distinct (address, user agent) among them.
      CREATE TABLE listener_open_channels (
        channel TEXT PRIMARY KEY,
        sessions INTEGER NOT NULL,
        listeners INTEGER NOT NULL
      );
      -- One row per listener with an open session: how many, and when the earliest of them connected.
      CREATE TABLE listener_open_listeners (
        channel TEXT NOT NULL,
        address TEXT NOT NULL,
        user_agent TEXT NOT NULL,
        sessions INTEGER NOT NULL,
        earliest_open TEXT NOT NULL,
        PRIMARY KEY (channel, address, user_agent)
      );
      CREATE INDEX listener_open_listeners_by_earliest ON listener_open_listeners (channel, earliest_open);
      -- A listener's earliest open session again when one closes.
      CREATE INDEX listener_sessions_open_by_listener ON listener_sessions (channel, address, user_agent, connected_at) WHERE disconnected_at IS NULL;
      -- The closed sessions overlapping a play: those that ended after it started.
      CREATE INDEX listener_sessions_closed_by_end ON listener_sessions (channel, disconnected_at, connected_at) WHERE disconnected_at IS NOT NULL;

      INSERT INTO listener_open_mounts (server, mount, sessions)
        SELECT server, mount, count(*) FROM listener_sessions WHERE disconnected_at IS NULL GROUP BY server, mount;
      INSERT INTO listener_open_listeners (channel, address, user_agent, sessions, earliest_open)
        SELECT channel, address, user_agent, count(*), min(connected_at) FROM listener_sessions WHERE disconnected_at IS NULL
         GROUP BY channel, address, user_agent;
      INSERT INTO listener_open_channels (channel, sessions, listeners)
        SELECT channel, sum(sessions), count(*) FROM listener_open_listeners GROUP BY channel;

      -- The channel's row first on both paths, as PostgreSQL's migration 15 does.
      CREATE TRIGGER listener_session_opened AFTER INSERT ON listener_sessions WHEN NEW.disconnected_at IS NULL
      BEGIN
        INSERT INTO listener_open_channels (channel, sessions, listeners) VALUES (NEW.channel, 1, 0)
          ON CONFLICT (channel) DO UPDATE SET sessions = sessions + 1;
        INSERT INTO listener_open_mounts (server, mount, sessions) VALUES (NEW.server, NEW.mount, 1)
          ON CONFLICT (server, mount) DO UPDATE SET sessions = sessions + 1;
        INSERT INTO listener_open_listeners (channel, address, user_agent, sessions, earliest_open)
          VALUES (NEW.channel, NEW.address, NEW.user_agent, 1, NEW.connected_at)
          ON CONFLICT (channel, address, user_agent) DO UPDATE SET sessions = sessions + 1, earliest_open = min(earliest_open, excluded.earliest_open);
        UPDATE listener_open_channels SET listeners = listeners + 1
         WHERE channel = NEW.channel
           AND (SELECT sessions FROM listener_open_listeners WHERE channel = NEW.channel AND address = NEW.address AND user_agent = NEW.user_agent) = 1;
      END;
      CREATE TRIGGER listener_session_closed AFTER UPDATE OF disconnected_at ON listener_sessions
        WHEN OLD.disconnected_at IS NULL AND NEW.disconnected_at IS NOT NULL
      BEGIN
        UPDATE listener_open_channels SET sessions = sessions - 1 WHERE channel = OLD.channel;
        UPDATE listener_open_mounts SET sessions = sessions - 1 WHERE server = OLD.server AND mount = OLD.mount;
        UPDATE listener_open_listeners
           SET sessions = sessions - 1,
               earliest_open = coalesce((SELECT min(connected_at) FROM listener_sessions
                                          WHERE channel = OLD.channel AND address = OLD.address AND user_agent = OLD.user_agent
                                            AND disconnected_at IS NULL), earliest_open)
         WHERE channel = OLD.channel AND address = OLD.address AND user_agent = OLD.user_agent;
        UPDATE listener_open_channels SET listeners = listeners - 1
         WHERE channel = OLD.channel
           AND (SELECT sessions FROM listener_open_listeners WHERE channel = OLD.channel AND address = OLD.address AND user_agent = OLD.user_agent) = 0;
        DELETE FROM listener_open_listeners WHERE channel = OLD.channel AND address = OLD.address AND user_agent = OLD.user_agent AND sessions = 0;
      END;

      -- Idempotency keys near their bounds (docs/security.md "Idempotency keys"): what each row
      -- counts against the byte bound (its answer, key and fingerprint, 64 for the row), and the
      -- totals kept by triggers, so trimming the oldest reads one row and the oldest keys from an
      -- index, never every answer kept.
      ALTER TABLE idempotency_keys ADD COLUMN counted_bytes INTEGER GENERATED ALWAYS AS (coalesce(length(body), 0) + length(key) + length(fingerprint) + 64) VIRTUAL;
      CREATE INDEX idempotency_keys_oldest ON idempotency_keys (created_at, key);
      CREATE TABLE idempotency_totals (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        entries INTEGER NOT NULL,
        bytes INTEGER NOT NULL
      );
      INSERT INTO idempotency_totals (id, entries, bytes) SELECT 1, count(*), coalesce(sum(counted_bytes), 0) FROM idempotency_keys;
      CREATE TRIGGER idempotency_key_added AFTER INSERT ON idempotency_keys
      BEGIN
        UPDATE idempotency_totals SET entries = entries + 1, bytes = bytes + NEW.counted_bytes WHERE id = 1;
      END;
      CREATE TRIGGER idempotency_key_changed AFTER UPDATE ON idempotency_keys WHEN OLD.counted_bytes IS NOT NEW.counted_bytes
      BEGIN
        UPDATE idempotency_totals SET bytes = bytes + NEW.counted_bytes - OLD.counted_bytes WHERE id = 1;
      END;
      CREATE TRIGGER idempotency_key_deleted AFTER DELETE ON idempotency_keys
      BEGIN
        UPDATE idempotency_totals SET entries = entries - 1, bytes = bytes - OLD.counted_bytes WHERE id = 1;
      END;
    `,
  },
];
