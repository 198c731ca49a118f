import type pg from 'pg';
import { headWait, messageOf, stateAfter, type MessageRow, type NewOutputMessage, type OutputStore } from '../outputs';

// The outputs' delivery log on PostgreSQL (docs/outputs.md "Delivery"; SQLite in store/outputs.ts).
// Instances race for the head of an output's queue with one conditional UPDATE: exactly one
// wins the claim, the others see no row and wait.

export function createPostgresOutputStore(pool: pg.Pool): OutputStore {
  return {
    enqueue: (messages) => enqueueMessages(pool, messages),
    async claim(output, options) {
      if (options.latestOnly) {
        // The newest takes over the output's wait and attempt count (a rate limit holds the
        // output, not one message), then the older ones are superseded: one statement.
        await pool.query(
          `WITH pending AS (
             SELECT max(id) AS newest, max(next_attempt_at) AS due, max(attempts) AS attempts, count(*) AS n
             FROM output_messages WHERE output = $2 AND state = 'pending' AND coalesce(claimed_until, 0) < $1
           ), inherited AS (
             UPDATE output_messages m SET next_attempt_at = greatest(m.next_attempt_at, p.due), attempts = greatest(m.attempts, p.attempts)
             FROM pending p WHERE m.id = p.newest AND p.n > 1
           )
           UPDATE output_messages SET state = 'superseded', finished_at = $1
           FROM pending p WHERE output = $2 AND state = 'pending' AND coalesce(claimed_until, 0) < $1 AND id < p.newest`,
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
      return taken.rowCount === 1 ? { message: messageOf(row) } : { waitMs: 0 };
    },
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
    },
    async health(output) {
      const [counts, finished, success, error] = await Promise.all([
        pool.query<{ pending: string; retrying: boolean | null }>(
          "SELECT count(*) AS pending, bool_or(attempts > 0) AS retrying FROM output_messages WHERE output = $1 AND state = 'pending'",
          [output],
        ),
        pool.query<{ state: string }>(
          "SELECT state FROM output_messages WHERE output = $1 AND state IN ('delivered', 'failed') ORDER BY finished_at DESC, id DESC LIMIT 1",
          [output],
        ),
        pool.query<{ finished_at: string; dbid: string }>(
          "SELECT finished_at, dbid FROM output_messages WHERE output = $1 AND state = 'delivered' ORDER BY finished_at DESC, id DESC LIMIT 1",
          [output],
        ),
        pool.query<{ at: string; error: string }>(
          `SELECT a.at, a.error FROM output_attempts a JOIN output_messages m ON m.id = a.message
           WHERE m.output = $1 AND a.error IS NOT NULL ORDER BY a.id DESC LIMIT 1`,
          [output],
        ),
      ]);
      const successRow = success.rows[0];
      const errorRow = error.rows[0];
      return {
        pending: Number(counts.rows[0]?.pending ?? 0),
        retrying: counts.rows[0]?.retrying === true,
        lastFinishedFailed: finished.rows[0]?.state === 'failed',
        lastSuccess: successRow ? { at: Number(successRow.finished_at), dbid: Number(successRow.dbid) } : null,
        lastError: errorRow ? { at: Number(errorRow.at), message: errorRow.error } : null,
      };
    },
    async prune(before) {
      const result = await pool.query("DELETE FROM output_messages WHERE state <> 'pending' AND finished_at < $1", [before]);
      return result.rowCount ?? 0;
    },
  };
}

/** One statement for every output of a change; RETURNING names the rows that were new. */
async function enqueueMessages(pool: pg.Pool, messages: readonly NewOutputMessage[]): Promise<boolean[]> {
  if (messages.length === 0) return [];
  const result = await pool.query<{ output: string; dbid: string; kind: string }>(
    `INSERT INTO output_messages (output, dbid, kind, message_id, payload, created_at, next_attempt_at)
     SELECT output, dbid, kind, message_id, payload, created_at, created_at
     FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[]) AS m (output, dbid, kind, message_id, payload, created_at)
     ON CONFLICT (output, dbid, kind) DO NOTHING
     RETURNING output, dbid, kind`,
    [
      messages.map((message) => message.output),
      messages.map((message) => message.dbid),
      messages.map((message) => message.kind),
      messages.map((message) => message.messageId),
      messages.map((message) => message.payload),
      messages.map((message) => message.createdAt),
    ],
  );
  const added = new Set(result.rows.map((row) => `${row.output} ${row.dbid} ${row.kind}`));
  return messages.map((message) => added.has(`${message.output} ${message.dbid} ${message.kind}`));
}
