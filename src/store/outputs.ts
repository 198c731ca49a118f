/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { Db } from './database';

// The durable delivery log of the outputs (docs/outputs.md "Delivery"). A record event is one
// change row, however many outputs there are (the only write a submission waits for); each
// output's cursor then moves the changes after it into that output's queue as messages. Every
// message and every attempt is a row, so a pending delivery survives a restart or kill -9. A
// message is unique per output, record and kind, so several instances that see one change queue
// it once; a delivery is claimed in the database (a lease), so exactly one instance sends it.

export type OutputMessageKind = 'track.changed' | 'track.settled' | 'track.deleted';
export type OutputMessageState = 'pending' | 'delivered' | 'failed' | 'superseded';

/** The record events outputs are told of: the keys of `feeds` in src/outputs/output.ts. */
export type OutputEvent = 'changed' | 'settled' | 'deleted' | 'restored';

export interface NewOutputChange {
  event: OutputEvent;
  dbid: number;
  /** What the outputs send, built once from the stored record. */
  payload: string;
  /** ms since the epoch. */
  createdAt: number;
}

export interface OutputChange extends NewOutputChange {
  id: number;
}

/** The message one output makes of a change, or undefined when it is not told of that event. */
export type MessageOf = (change: OutputChange, output: string) => NewOutputMessage | undefined;

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
  /** Not sent before this (ms since the epoch): an output's `delay` (docs/play-log.md "During, but not before"). */
  notBefore?: number;
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
  /** Adds one change: one row, whatever the number of outputs. */
  record(change: NewOutputChange): Promise<void>;
  /** Outputs without a cursor start after the newest change: a new output is sent no history. */
  startCursors(outputs: readonly string[]): Promise<void>;
  /**
   * Moves up to EXPAND_BATCH changes after each output's cursor into its queue, in one
   * transaction, one instance at a time; a message already queued for that output, record and
   * kind is not added again. Answers the outputs that got messages, and whether changes
   * are left.
   */
  expand(outputs: readonly string[], messageOf: MessageOf): Promise<{ added: Set<string>; more: boolean }>;
  claim(output: string, options: ClaimOptions): Promise<ClaimAnswer>;
  /** Records the attempt and moves the message on; the claim is released. */
  finish(messageId: number, result: AttemptResult): Promise<void>;
  health(output: string): Promise<OutputHealth>;
  /** Deletes finished messages (and their attempts) finished before `before`, and older changes; returns how many messages. */
  prune(before: number): Promise<number>;
}

/** Changes moved into queues per expand(): bounds the transaction and its memory. */
export const EXPAND_BATCH = 500;

export interface ChangeRow {
  id: number | string;
  event: OutputEvent;
  dbid: number | string;
  payload: string;
  created_at: number | string;
}

export function changeOf(row: ChangeRow): OutputChange {
  return { id: Number(row.id), event: row.event, dbid: Number(row.dbid), payload: row.payload, createdAt: Number(row.created_at) };
}

/**
 * The messages `changes` (in id order) make for outputs whose cursors are behind them, and where
 * each cursor goes: both backends queue exactly these.
 */
export function expansionOf(
  changes: readonly OutputChange[],
  cursors: ReadonlyMap<string, number>,
  messageOf: MessageOf,
): { messages: NewOutputMessage[]; cursors: Map<string, number> } {
  const messages: NewOutputMessage[] = [];
  const moved = new Map<string, number>();
  const last = changes.at(-1)?.id;
  for (const change of changes) {
    for (const [output, cursor] of cursors) {
      if (change.id <= cursor) continue;
      const message = messageOf(change, output);
      if (message) messages.push(message);
    }
  }
  if (last !== undefined) for (const [output, cursor] of cursors) if (cursor < last) moved.set(output, last);
  return { messages, cursors: moved };
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
  // `state <> 'pending'` is the finished index's own condition: SQLite uses a partial index only
  // when the query states it.
  const lastFinished = db.prepare<[string], { state: string }>(
    "SELECT state FROM output_messages WHERE output = ? AND state IN ('delivered', 'failed') AND state <> 'pending' ORDER BY finished_at DESC, id DESC LIMIT 1",
  );
  const lastSuccess = db.prepare<[string], { finished_at: number; dbid: number }>(
    "SELECT finished_at, dbid FROM output_messages WHERE output = ? AND state = 'delivered' AND state <> 'pending' ORDER BY finished_at DESC, id DESC LIMIT 1",
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
  const changeLog = createChangeLog(db);
  const finish = db.transaction((id: number, result: AttemptResult) => {
    addAttempt.run(id, result.at, result.durationMs, result.outcome, result.status ?? null, result.error ?? null);
    const done = result.outcome !== 'retry';
    advance.run(stateAfter(result), result.nextAttemptAt ?? null, done ? result.at : null, result.receipt ?? null, result.error ?? null, id);
  });

  return {
    record: changeLog.record,
    startCursors: changeLog.startCursors,
    expand: changeLog.expand,
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
      changeLog.pruneChanges(before);
      return prune.run(before).changes;
    },
  };
}

/** The change rows and the cursors that move them into the queues (SQLite is one writer: a transaction is the lock). */
function createChangeLog(db: Db) {
  const insert = db.prepare<[string, number, string, string, string, number, number], never>(
    `INSERT INTO output_messages (output, dbid, kind, message_id, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (output, dbid, kind) DO NOTHING`,
  );
  const addChange = db.prepare<[string, number, string, number], never>('INSERT INTO output_changes (event, dbid, payload, created_at) VALUES (?, ?, ?, ?)');
  const startCursor = db.prepare<[string], never>(
    'INSERT OR IGNORE INTO output_cursors (output, change_id) SELECT ?, coalesce(max(id), 0) FROM output_changes',
  );
  const cursorOf = db.prepare<[string], { change_id: number }>('SELECT change_id FROM output_cursors WHERE output = ?');
  const changesAfter = db.prepare<[number, number], ChangeRow>('SELECT * FROM output_changes WHERE id > ? ORDER BY id LIMIT ?');
  const moveCursor = db.prepare<[number, string], never>('UPDATE output_cursors SET change_id = ? WHERE output = ?');
  const pruneChanges = db.prepare<[number], never>('DELETE FROM output_changes WHERE created_at < ?');

  const startCursors = db.transaction((outputs: readonly string[]) => outputs.forEach((output) => startCursor.run(output)));
  const expand = db.transaction((outputs: readonly string[], messageOf: MessageOf) => {
    const cursors = new Map(
      outputs.flatMap((output) => {
        const row = cursorOf.get(output);
        return row ? [[output, row.change_id] as const] : [];
      }),
    );
    if (cursors.size === 0) return { added: new Set<string>(), more: false };
    const rows = changesAfter.all(Math.min(...cursors.values()), EXPAND_BATCH);
    const expansion = expansionOf(rows.map(changeOf), cursors, messageOf);
    const added = new Set(
      expansion.messages
        .filter(
          ({ output, dbid, kind, messageId, payload, createdAt, notBefore }) =>
            insert.run(output, dbid, kind, messageId, payload, createdAt, notBefore ?? createdAt).changes > 0,
        )
        .map((message) => message.output),
    );
    for (const [output, changeId] of expansion.cursors) moveCursor.run(changeId, output);
    return { added, more: rows.length === EXPAND_BATCH };
  });
  return {
    record: async (change: NewOutputChange): Promise<void> => {
      addChange.run(change.event, change.dbid, change.payload, change.createdAt);
    },
    startCursors: async (outputs: readonly string[]): Promise<void> => {
      startCursors(outputs);
    },
    expand: async (outputs: readonly string[], messageOf: MessageOf) => expand(outputs, messageOf),
    pruneChanges: (before: number): void => {
      pruneChanges.run(before);
    },
  };
}
