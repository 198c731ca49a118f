/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { Db } from './database';

// The durable delivery log of the outputs (docs/outputs.md "Delivery"): every message and every
// attempt is a row, so a pending delivery survives a restart or kill -9. A message is unique per
// output, record and kind, so several instances that see one change enqueue it once; a delivery
// is claimed in the database (a lease), so exactly one instance sends it at a time.

export type OutputMessageKind = 'track.changed' | 'track.settled' | 'track.deleted';
export type OutputMessageState = 'pending' | 'delivered' | 'failed' | 'superseded';

export interface NewOutputMessage {
  output: string;
  dbid: number;
  kind: OutputMessageKind;
  /** Unique per message and the same on every retry (the webhook-id). */
  messageId: string;
  /** What the output sends, built once from the stored record. */
  payload: string;
  /** ms since the epoch. */
  createdAt: number;
}

export interface OutputMessage extends NewOutputMessage {
  id: number;
  attempts: number;
}

/** The oldest pending message when it is due, or how long until it may be. */
export type ClaimAnswer = { message: OutputMessage } | { waitMs: number } | null;

export interface ClaimOptions {
  owner: string;
  now: number;
  /** How long the claim holds if its owner dies mid-delivery. */
  leaseMs: number;
  /** Older pending messages are superseded by the newest (Discord, stream titles, MQTT). */
  latestOnly: boolean;
}

export interface AttemptResult {
  at: number;
  durationMs: number;
  /** Where the message goes next: done, given up, or another try at `nextAttemptAt`. */
  outcome: 'delivered' | 'failed' | 'retry';
  status?: number;
  error?: string;
  receipt?: string;
  nextAttemptAt?: number;
}

export interface OutputHealth {
  pending: number;
  /** The oldest pending message has failed at least once. */
  retrying: boolean;
  /** The last message that finished was given up. */
  lastFinishedFailed: boolean;
  lastSuccess: { at: number; dbid: number } | null;
  lastError: { at: number; message: string } | null;
}

export interface OutputStore {
  /**
   * Adds each message unless its output already has one for that record and kind, all in one
   * write (a change reaches every output in one transaction); per message, true when added.
   */
  enqueue(messages: readonly NewOutputMessage[]): Promise<boolean[]>;
  claim(output: string, options: ClaimOptions): Promise<ClaimAnswer>;
  /** Records the attempt and moves the message on; the claim is released. */
  finish(messageId: number, result: AttemptResult): Promise<void>;
  health(output: string): Promise<OutputHealth>;
  /** Deletes finished messages (and their attempts) finished before `before`; returns how many. */
  prune(before: number): Promise<number>;
}

export interface MessageRow {
  id: number | string;
  output: string;
  dbid: number | string;
  kind: OutputMessageKind;
  message_id: string;
  payload: string;
  created_at: number | string;
  attempts: number;
  next_attempt_at: number | string;
  claimed_until: number | string | null;
}

export function messageOf(row: MessageRow): OutputMessage {
  return {
    id: Number(row.id),
    output: row.output,
    dbid: Number(row.dbid),
    kind: row.kind,
    messageId: row.message_id,
    payload: row.payload,
    createdAt: Number(row.created_at),
    attempts: Number(row.attempts),
  };
}

/** Whether the head of the queue may be claimed now, or how long to wait (both backends). */
export function headWait(row: MessageRow, now: number): number {
  return Math.max(Number(row.next_attempt_at), Number(row.claimed_until ?? 0)) - now;
}

/** The state a finished attempt leaves its message in. */
export function stateAfter(result: AttemptResult): OutputMessageState {
  return result.outcome === 'retry' ? 'pending' : result.outcome;
}

export function createOutputStore(db: Db): OutputStore {
  const insert = db.prepare<[string, number, string, string, string, number, number], never>(
    `INSERT INTO output_messages (output, dbid, kind, message_id, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (output, dbid, kind) DO NOTHING`,
  );
  const supersede = db.prepare<[number, string, number, string], never>(
    `UPDATE output_messages SET state = 'superseded', finished_at = ?
     WHERE output = ? AND state = 'pending' AND coalesce(claimed_until, 0) < ?
       AND id < (SELECT max(id) FROM output_messages WHERE output = ? AND state = 'pending')`,
  );
  // The newest takes over the output's wait and attempt count: a rate limit or an outage holds
  // the output, not one message, so superseding never sends early.
  const inherit = db.prepare<[{ output: string; now: number }], never>(
    `UPDATE output_messages SET
       next_attempt_at = max(next_attempt_at, (SELECT max(next_attempt_at) FROM output_messages WHERE output = @output AND state = 'pending')),
       attempts = max(attempts, (SELECT max(attempts) FROM output_messages WHERE output = @output AND state = 'pending'))
     WHERE id = (SELECT max(id) FROM output_messages WHERE output = @output AND state = 'pending')
       AND (SELECT count(*) FROM output_messages WHERE output = @output AND state = 'pending' AND coalesce(claimed_until, 0) < @now) > 1`,
  );
  const head = db.prepare<[string], MessageRow>("SELECT * FROM output_messages WHERE output = ? AND state = 'pending' ORDER BY id LIMIT 1");
  const take = db.prepare<[string, number, number, number], never>(
    "UPDATE output_messages SET claimed_by = ?, claimed_until = ? WHERE id = ? AND state = 'pending' AND coalesce(claimed_until, 0) < ?",
  );
  const addAttempt = db.prepare<[number, number, number, string, number | null, string | null], never>(
    'INSERT INTO output_attempts (message, at, duration_ms, outcome, status, error) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const advance = db.prepare<[string, number | null, number | null, string | null, string | null, number], never>(
    `UPDATE output_messages SET state = ?, attempts = attempts + 1, claimed_by = NULL, claimed_until = NULL,
       next_attempt_at = coalesce(?, next_attempt_at), finished_at = ?, receipt = coalesce(?, receipt), last_error = ? WHERE id = ?`,
  );
  const counts = db.prepare<[string], { pending: number; retrying: number }>(
    "SELECT count(*) AS pending, coalesce(max(attempts > 0), 0) AS retrying FROM output_messages WHERE output = ? AND state = 'pending'",
  );
  const lastFinished = db.prepare<[string], { state: string }>(
    "SELECT state FROM output_messages WHERE output = ? AND state IN ('delivered', 'failed') ORDER BY finished_at DESC, id DESC LIMIT 1",
  );
  const lastSuccess = db.prepare<[string], { finished_at: number; dbid: number }>(
    "SELECT finished_at, dbid FROM output_messages WHERE output = ? AND state = 'delivered' ORDER BY finished_at DESC, id DESC LIMIT 1",
  );
  const lastError = db.prepare<[string], { at: number; error: string }>(
    `SELECT a.at, a.error FROM output_attempts a JOIN output_messages m ON m.id = a.message
     WHERE m.output = ? AND a.error IS NOT NULL ORDER BY a.id DESC LIMIT 1`,
  );
  const prune = db.prepare<[number], never>("DELETE FROM output_messages WHERE state <> 'pending' AND finished_at < ?");

  const claim = db.transaction((output: string, options: ClaimOptions): ClaimAnswer => {
    if (options.latestOnly) {
      inherit.run({ output, now: options.now });
      supersede.run(options.now, output, options.now, output);
    }
    const row = head.get(output);
    if (!row) return null;
    const waitMs = headWait(row, options.now);
    if (waitMs > 0) return { waitMs };
    if (take.run(options.owner, options.now + options.leaseMs, row.id as number, options.now).changes === 0) return { waitMs: 0 };
    return { message: messageOf(row) };
  });
  const enqueueAll = db.transaction((messages: readonly NewOutputMessage[]) =>
    messages.map(
      ({ output, dbid, kind, messageId, payload, createdAt }) => insert.run(output, dbid, kind, messageId, payload, createdAt, createdAt).changes > 0,
    ),
  );
  const finish = db.transaction((id: number, result: AttemptResult) => {
    addAttempt.run(id, result.at, result.durationMs, result.outcome, result.status ?? null, result.error ?? null);
    const done = result.outcome !== 'retry';
    advance.run(stateAfter(result), result.nextAttemptAt ?? null, done ? result.at : null, result.receipt ?? null, result.error ?? null, id);
  });

  return {
    async enqueue(messages) {
      return messages.length === 0 ? [] : enqueueAll(messages);
    },
    async claim(output, options) {
      return claim(output, options);
    },
    async finish(id, result) {
      finish(id, result);
    },
    async health(output) {
      const count = counts.get(output);
      const success = lastSuccess.get(output);
      const error = lastError.get(output);
      return {
        pending: count?.pending ?? 0,
        retrying: (count?.retrying ?? 0) === 1,
        lastFinishedFailed: lastFinished.get(output)?.state === 'failed',
        lastSuccess: success ? { at: success.finished_at, dbid: success.dbid } : null,
        lastError: error ? { at: error.at, message: error.error } : null,
      };
    },
    async prune(before) {
      return prune.run(before).changes;
    },
  };
}
