import type pg from 'pg';
import {
  changeOf,
  EXPAND_BATCH,
  expansionOf,
  headWait,
  healthOf,
  messageOf,
  trackPayload,
  stateAfter,
  type ChangeRow,
  type MessageOf,
  type ClaimAnswer,
  type ClaimOptions,
  type HealthRows,
  type MessageRow,
  type NewOutputMessage,
  type OutputHealth,
  type OutputStore,
} from '../outputs';
import { inTransaction } from './connection';

// The outputs' delivery log on PostgreSQL (docs/outputs.md "Delivery"; SQLite in store/outputs.ts).
// Instances race for the head of an output's queue with one conditional UPDATE: exactly one
// wins the claim, the others see no row and wait. They move changes into queues in turns (an
// advisory lock), so each output's messages keep the order of its changes.

/** Held by expand() alone, and shared by every record() (the other svc locks are 0x5356_43xx too). */
export const EXPAND_LOCK = 0x5356_4303;

export function createPostgresOutputStore(pool: pg.Pool): OutputStore {
  return {
    async record(change) {
      // Under the lock's shared side: an id is taken and committed while expand() cannot read, so
      // it never moves a cursor past a change still being written (ids commit out of order).
      await pool.query(
        `INSERT INTO output_changes (event, dbid, payload, created_at)
         SELECT $1, $2, $3, $4 FROM (SELECT pg_advisory_xact_lock_shared($5)) AS locked`,
        [change.event, change.dbid, change.payload, change.createdAt, EXPAND_LOCK],
      );
    },
    async startCursors(outputs) {
      await pool.query(
        `INSERT INTO output_cursors (output, change_id)
         SELECT o, (SELECT coalesce(max(id), 0) FROM output_changes) FROM unnest($1::text[]) AS o ON CONFLICT (output) DO NOTHING`,
        [outputs],
      );
    },
    expand: (outputs, messageOf) => inTransaction(pool, (client) => expandChanges(client, outputs, messageOf)),
    claim: (output, options) => claimHead(pool, output, options),
    async finish(id, result) {
      const done = result.outcome !== 'retry';
      // One statement: the attempt and the message's new state are written together.
      await pool.query(
        `WITH attempt AS (INSERT INTO output_attempts (message, at, duration_ms, outcome, status, error) VALUES ($1, $2, $3, $4, $5, $6))
         UPDATE output_messages SET state = $7, attempts = attempts + 1, claimed_by = NULL, claimed_until = NULL,
           next_attempt_at = coalesce($8, next_attempt_at), finished_at = $9, receipt = coalesce($10, receipt), last_error = $6 WHERE id = $1`,
        [
          id,
          result.at,
          Math.round(result.durationMs),
          result.outcome,
          result.status ?? null,
          result.error ?? null,
          stateAfter(result),
          result.nextAttemptAt ?? null,
          done ? result.at : null,
          result.receipt ?? null,
        ],
      );
      // What a current-state target shows now: nothing older is sent to it after this.
      if (result.outcome === 'delivered') {
        await pool.query(
          `UPDATE output_cursors c SET shown_dbid = greatest(c.shown_dbid, m.dbid) FROM output_messages m WHERE m.id = $1 AND c.output = m.output`,
          [id],
        );
      }
    },
    async recordTest(output, test) {
      await pool.query(
        `UPDATE output_cursors SET tested_at = $2, test_dbid = $3, test_error = $4,
           shown_dbid = CASE WHEN $4::text IS NULL THEN greatest(shown_dbid, $3) ELSE shown_dbid END WHERE output = $1`,
        [output, test.at, test.dbid, test.error ?? null],
      );
    },
    health: async (output) => healthOf(await healthRows(pool, output)),
    async prune(before) {
      await pool.query('DELETE FROM output_changes WHERE created_at < $1', [before]);
      const result = await pool.query("DELETE FROM output_messages WHERE state <> 'pending' AND finished_at < $1", [before]);
      return result.rowCount ?? 0;
    },
  };
}

/** Supersedes what gives way (latestOnly), then claims the head of the queue when it is due. */
async function claimHead(pool: pg.Pool, output: string, options: ClaimOptions): Promise<ClaimAnswer> {
  if (options.latestOnly) {
    // The newest takes over the output's wait and attempt count (a rate limit holds the output,
    // not one message); the others, and those for a record older than the newest shown, are
    // superseded and counted: one statement. The newest is the message of the newest record (then
    // the last queued of it), not the last queued: instances and late ends of enrichment queue
    // records out of dbid order (docs/outputs.md "Delivery").
    await pool.query(
      `WITH open AS (
         SELECT id, dbid, next_attempt_at, attempts FROM output_messages
         WHERE output = $2 AND state = 'pending' AND coalesce(claimed_until, 0) < $1
       ), pending AS (
         SELECT (SELECT id FROM open ORDER BY dbid DESC, id DESC LIMIT 1) AS newest,
           max(next_attempt_at) AS due, max(attempts) AS attempts, count(*) AS n FROM open
       ), inherited AS (
         UPDATE output_messages m SET next_attempt_at = greatest(m.next_attempt_at, p.due), attempts = greatest(m.attempts, p.attempts)
         FROM pending p WHERE m.id = p.newest AND p.n > 1
       ), skipped AS (
         UPDATE output_messages SET state = 'superseded', finished_at = $1
         FROM pending p WHERE output = $2 AND state = 'pending' AND coalesce(claimed_until, 0) < $1
           AND (id <> p.newest OR dbid < (SELECT shown_dbid FROM output_cursors WHERE output = $2))
         RETURNING 1
       )
       UPDATE output_cursors SET superseded = superseded + (SELECT count(*) FROM skipped) WHERE output = $2 AND EXISTS (SELECT 1 FROM skipped)`,
      [options.now, output],
    );
  }
  const head = await pool.query<MessageRow>("SELECT * FROM output_messages WHERE output = $1 AND state = 'pending' ORDER BY id LIMIT 1", [output]);
  const row = head.rows[0];
  if (!row) return null;
  const waitMs = headWait(row, options.now);
  if (waitMs > 0) return { waitMs };
  const taken = await pool.query(
    "UPDATE output_messages SET claimed_by = $1, claimed_until = $2 WHERE id = $3 AND state = 'pending' AND coalesce(claimed_until, 0) < $4 AND next_attempt_at <= $4",
    [options.owner, options.now + options.leaseMs, row.id, options.now],
  );
  if (taken.rowCount !== 1) return { waitMs: 0 };
  if (row.held_until === null) return { message: messageOf(row) };
  // Its enrichment did not end in time (its instance may have died): it goes with what is stored, unless the record is gone.
  const stored = await pool.query<{ metadata: string }>('SELECT metadata::text AS metadata FROM tracks WHERE dbid = $1', [row.dbid]);
  const metadata = stored.rows[0]?.metadata;
  if (metadata !== undefined) return { message: { ...messageOf(row), payload: trackPayload(Number(row.dbid), metadata) } };
  await pool.query(
    `WITH dropped AS (UPDATE output_messages SET state = 'superseded', finished_at = $2 WHERE id = $1 RETURNING output)
     UPDATE output_cursors SET superseded = superseded + 1 WHERE output = (SELECT output FROM dropped)`,
    [row.id, options.now],
  );
  return { waitMs: 0 };
}

async function healthRows(pool: pg.Pool, output: string): Promise<HealthRows> {
  const [counts, finished, success, error, cursor] = await Promise.all([
    pool.query<{ pending: string; retrying: boolean | null }>(
      "SELECT count(*) AS pending, bool_or(attempts > 0) AS retrying FROM output_messages WHERE output = $1 AND state = 'pending'",
      [output],
    ),
    pool.query<{ state: string; finished_at: string }>(
      "SELECT state, finished_at FROM output_messages WHERE output = $1 AND state IN ('delivered', 'failed') ORDER BY finished_at DESC, id DESC LIMIT 1",
      [output],
    ),
    pool.query<{ finished_at: string; dbid: string; receipt: string | null }>(
      "SELECT finished_at, dbid, receipt FROM output_messages WHERE output = $1 AND state = 'delivered' ORDER BY finished_at DESC, id DESC LIMIT 1",
      [output],
    ),
    pool.query<{ at: string; error: string }>(
      `SELECT a.at, a.error FROM output_attempts a JOIN output_messages m ON m.id = a.message
       WHERE m.output = $1 AND a.error IS NOT NULL ORDER BY a.id DESC LIMIT 1`,
      [output],
    ),
    pool.query<{ superseded: string; tested_at: string | null; test_dbid: string | null; test_error: string | null }>(
      'SELECT superseded, tested_at, test_dbid, test_error FROM output_cursors WHERE output = $1',
      [output],
    ),
  ]);
  const finishedRow = finished.rows[0];
  const successRow = success.rows[0];
  const errorRow = error.rows[0];
  const own = cursor.rows[0];
  return {
    pending: Number(counts.rows[0]?.pending ?? 0),
    retrying: counts.rows[0]?.retrying === true,
    superseded: Number(own?.superseded ?? 0),
    lastFinished: finishedRow ? { state: finishedRow.state, at: Number(finishedRow.finished_at) } : undefined,
    lastSuccess: successRow ? lastSuccessOf(successRow) : undefined,
    lastError: errorRow ? { at: Number(errorRow.at), message: errorRow.error } : undefined,
    test: own?.tested_at != null ? { at: Number(own.tested_at), dbid: Number(own.test_dbid ?? 0), error: own.test_error } : undefined,
  };
}

async function expandChanges(client: pg.PoolClient, outputs: readonly string[], messageOf: MessageOf): Promise<{ added: Set<string>; more: boolean }> {
  await client.query('SELECT pg_advisory_xact_lock($1)', [EXPAND_LOCK]);
  const cursorRows = await client.query<{ output: string; change_id: string }>('SELECT output, change_id FROM output_cursors WHERE output = ANY($1::text[])', [
    outputs,
  ]);
  const cursors = new Map(cursorRows.rows.map((row) => [row.output, Number(row.change_id)]));
  if (cursors.size === 0) return { added: new Set(), more: false };
  const changes = await client.query<ChangeRow>('SELECT * FROM output_changes WHERE id > $1 ORDER BY id LIMIT $2', [
    Math.min(...cursors.values()),
    EXPAND_BATCH,
  ]);
  const expansion = expansionOf(changes.rows.map(changeOf), cursors, messageOf);
  const added = await insertMessages(client, expansion.messages);
  if (expansion.cursors.size > 0) {
    await client.query(
      'UPDATE output_cursors c SET change_id = m.change_id FROM unnest($1::text[], $2::bigint[]) AS m (output, change_id) WHERE c.output = m.output',
      [[...expansion.cursors.keys()], [...expansion.cursors.values()]],
    );
  }
  return { added, more: changes.rows.length === EXPAND_BATCH };
}

/** One statement for all the messages; answers the outputs that got a new one. */
async function insertMessages(client: pg.PoolClient, messages: readonly NewOutputMessage[]): Promise<Set<string>> {
  if (messages.length === 0) return new Set();
  const result = await client.query<{ output: string }>(
    `INSERT INTO output_messages (output, dbid, kind, message_id, payload, created_at, next_attempt_at, held_until)
     SELECT output, dbid, kind, message_id, payload, created_at, not_before, held_until
     FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[])
       AS m (output, dbid, kind, message_id, payload, created_at, not_before, held_until)
     ON CONFLICT (output, dbid, kind) DO UPDATE SET payload = excluded.payload, held_until = NULL
     WHERE output_messages.state = 'pending' AND output_messages.held_until IS NOT NULL AND excluded.held_until IS NULL
     RETURNING output`,
    [
      messages.map((message) => message.output),
      messages.map((message) => message.dbid),
      messages.map((message) => message.kind),
      messages.map((message) => message.messageId),
      messages.map((message) => message.payload),
      messages.map((message) => message.createdAt),
      messages.map((message) => message.notBefore ?? message.createdAt),
      messages.map((message) => message.heldUntil ?? null),
    ],
  );
  return new Set(result.rows.map((row) => row.output));
}

function lastSuccessOf(row: { finished_at: string; dbid: string; receipt: string | null }): NonNullable<OutputHealth['lastSuccess']> {
  return { at: Number(row.finished_at), dbid: Number(row.dbid), ...(row.receipt ? { receipt: row.receipt } : {}) };
}
