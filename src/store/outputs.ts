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
  /**
   * Made from a record still being enriched: held, with the messages behind it, until its
   * enrichment ends (the `settled` message of the same output, record and kind replaces its
   * payload and releases it) or until this time (ms since the epoch), when it goes with what is stored.
   */
  heldUntil?: number;
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
  /**
   * A current-state target (Discord, stream titles, MQTT): older pending messages are superseded
   * by the newest, and so is one for a record older than the newest it was shown.
   */
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

export interface OutputTest {
  at: number;
  dbid: number;
  error?: string;
}

export interface OutputHealth {
  pending: number;
  /** Messages skipped for a newer one (a current-state target), since the output was added. */
  superseded: number;
  /** The oldest pending message has failed at least once. */
  retrying: boolean;
  /** The last message that finished was given up, and no test delivered since. */
  lastFinishedFailed: boolean;
  /** The newest delivered message, with the target's receipt when it gave one. */
  lastSuccess: { at: number; dbid: number; receipt?: string } | null;
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
  /** Keeps the outcome of `svc outputs test` (error undefined: delivered) for the output's health. */
  recordTest(output: string, test: OutputTest): Promise<void>;
  health(output: string): Promise<OutputHealth>;
  /** Deletes finished messages (and their attempts) finished before `before`, and older changes; returns how many messages. */
  prune(before: number): Promise<number>;
}

/**
 * The /v1/last object of a stored record, `{"dbid":…, …metadata}`, from its metadata's JSON text
 * (no `dbid` key: sanitizing removes it): what every output builds its message from.
 */
export function trackPayload(dbid: number, metadataJson: string): string {
  const rest = metadataJson.slice(1).trimStart();
  return `{"dbid":${dbid}${rest.startsWith('}') ? '' : ','}${rest}`;
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
  const queued = new Map<string, NewOutputMessage>();
  const moved = new Map<string, number>();
  const last = changes.at(-1)?.id;
  for (const change of changes) {
    for (const [output, cursor] of cursors) {
      if (change.id <= cursor) continue;
      const message = messageOf(change, output);
      if (!message) continue;
      // One message per output, record and kind; a held one in this batch is released here (one upsert may not touch a row twice).
      const key = `${message.output}\n${message.dbid}\n${message.kind}`;
      const earlier = queued.get(key);
      if (!earlier) {
        queued.set(key, message);
        messages.push(message);
      } else if (earlier.heldUntil !== undefined && message.heldUntil === undefined) {
        earlier.payload = message.payload;
        delete earlier.heldUntil;
      }
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
  held_until: number | string | null;
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
  return Math.max(Number(row.next_attempt_at), Number(row.claimed_until ?? 0), Number(row.held_until ?? 0)) - now;
}

/** What a test row and the last finished message say of an output (both backends). */
export interface HealthRows {
  pending: number;
  retrying: boolean;
  superseded: number;
  lastFinished: { state: string; at: number } | undefined;
  lastSuccess: { at: number; dbid: number; receipt?: string } | undefined;
  lastError: { at: number; message: string } | undefined;
  test: { at: number; dbid: number; error: string | null } | undefined;
}

/** Any success, a test's too, returns the output to ok; the newest error, a test's too, is the last error. */
export function healthOf(rows: HealthRows): OutputHealth {
  const { test, lastFinished } = rows;
  const testDelivered = test && test.error === null ? { at: test.at, dbid: test.dbid } : undefined;
  const testError = test && test.error !== null ? { at: test.at, message: test.error } : undefined;
  const newest = <T extends { at: number }>(a: T | undefined, b: T | undefined): T | null => (a && b ? (b.at > a.at ? b : a) : (a ?? b ?? null));
  return {
    pending: rows.pending,
    superseded: rows.superseded,
    retrying: rows.retrying,
    lastFinishedFailed: lastFinished?.state === 'failed' && !(testDelivered && testDelivered.at >= lastFinished.at),
    lastSuccess: newest(rows.lastSuccess, testDelivered),
    lastError: newest(rows.lastError, testError),
  };
}

/** The state a finished attempt leaves its message in. */
export function stateAfter(result: AttemptResult): OutputMessageState {
  return result.outcome === 'retry' ? 'pending' : result.outcome;
}

export function createOutputStore(db: Db): OutputStore {
  // Older pending ones, and those for a record older than the newest shown, give way (latestOnly).
  const supersede = db.prepare<[{ output: string; now: number }], never>(
    `UPDATE output_messages SET state = 'superseded', finished_at = @now
     WHERE output = @output AND state = 'pending' AND coalesce(claimed_until, 0) < @now
       AND (id < (SELECT max(id) FROM output_messages WHERE output = @output AND state = 'pending')
         OR dbid < (SELECT shown_dbid FROM output_cursors WHERE output = @output))`,
  );
  const countSuperseded = db.prepare<[number, string], never>('UPDATE output_cursors SET superseded = superseded + ? WHERE output = ?');
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
  const storedMetadata = db.prepare<[number], { metadata: string }>('SELECT metadata FROM tracks WHERE dbid = ?');
  const dropMessage = db.prepare<[number, number], never>("UPDATE output_messages SET state = 'superseded', finished_at = ? WHERE id = ?");
  const addAttempt = db.prepare<[number, number, number, string, number | null, string | null], never>(
    'INSERT INTO output_attempts (message, at, duration_ms, outcome, status, error) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const advance = db.prepare<[string, number | null, number | null, string | null, string | null, number], never>(
    `UPDATE output_messages SET state = ?, attempts = attempts + 1, claimed_by = NULL, claimed_until = NULL,
       next_attempt_at = coalesce(?, next_attempt_at), finished_at = ?, receipt = coalesce(?, receipt), last_error = ? WHERE id = ?`,
  );
  const shown = db.prepare<[number], never>(
    `UPDATE output_cursors SET shown_dbid = max(shown_dbid, m.dbid)
     FROM (SELECT output, dbid FROM output_messages WHERE id = ?) AS m WHERE output_cursors.output = m.output`,
  );
  const tested = db.prepare<[number, number, string | null, string], never>(
    'UPDATE output_cursors SET tested_at = ?, test_dbid = ?, test_error = ? WHERE output = ?',
  );
  const testShown = db.prepare<[number, string], never>('UPDATE output_cursors SET shown_dbid = max(shown_dbid, ?) WHERE output = ?');
  const health = createHealthReads(db);
  const prune = db.prepare<[number], never>("DELETE FROM output_messages WHERE state <> 'pending' AND finished_at < ?");

  const claim = db.transaction((output: string, options: ClaimOptions): ClaimAnswer => {
    if (options.latestOnly) {
      inherit.run({ output, now: options.now });
      const skipped = supersede.run({ output, now: options.now }).changes;
      if (skipped > 0) countSuperseded.run(skipped, output);
    }
    const row = head.get(output);
    if (!row) return null;
    const waitMs = headWait(row, options.now);
    if (waitMs > 0) return { waitMs };
    if (take.run(options.owner, options.now + options.leaseMs, row.id as number, options.now).changes === 0) return { waitMs: 0 };
    if (row.held_until === null) return { message: messageOf(row) };
    // Its enrichment did not end in time (its instance may have died): it goes with what is stored, unless the record is gone.
    const stored = storedMetadata.get(Number(row.dbid));
    if (stored) return { message: { ...messageOf(row), payload: trackPayload(Number(row.dbid), stored.metadata) } };
    dropMessage.run(options.now, row.id as number);
    countSuperseded.run(1, output);
    return { waitMs: 0 };
  });
  const changeLog = createChangeLog(db);
  const finish = db.transaction((id: number, result: AttemptResult) => {
    addAttempt.run(id, result.at, result.durationMs, result.outcome, result.status ?? null, result.error ?? null);
    const done = result.outcome !== 'retry';
    advance.run(stateAfter(result), result.nextAttemptAt ?? null, done ? result.at : null, result.receipt ?? null, result.error ?? null, id);
    if (result.outcome === 'delivered') shown.run(id);
  });
  const recordTest = db.transaction((output: string, test: OutputTest) => {
    tested.run(test.at, test.dbid, test.error ?? null, output);
    if (test.error === undefined) testShown.run(test.dbid, output);
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
    async recordTest(output, test) {
      recordTest(output, test);
    },
    async health(output) {
      return healthOf(health(output));
    },
    async prune(before) {
      changeLog.pruneChanges(before);
      return prune.run(before).changes;
    },
  };
}

/** The rows an output's health is made of (healthOf). */
function createHealthReads(db: Db): (output: string) => HealthRows {
  const counts = db.prepare<[string], { pending: number; retrying: number }>(
    "SELECT count(*) AS pending, coalesce(max(attempts > 0), 0) AS retrying FROM output_messages WHERE output = ? AND state = 'pending'",
  );
  // `state <> 'pending'` is the finished index's own condition: SQLite uses a partial index only
  // when the query states it.
  const lastFinished = db.prepare<[string], { state: string; finished_at: number }>(
    "SELECT state, finished_at FROM output_messages WHERE output = ? AND state IN ('delivered', 'failed') AND state <> 'pending' ORDER BY finished_at DESC, id DESC LIMIT 1",
  );
  const lastSuccess = db.prepare<[string], { finished_at: number; dbid: number; receipt: string | null }>(
    "SELECT finished_at, dbid, receipt FROM output_messages WHERE output = ? AND state = 'delivered' AND state <> 'pending' ORDER BY finished_at DESC, id DESC LIMIT 1",
  );
  const lastError = db.prepare<[string], { at: number; error: string }>(
    `SELECT a.at, a.error FROM output_attempts a JOIN output_messages m ON m.id = a.message
     WHERE m.output = ? AND a.error IS NOT NULL ORDER BY a.id DESC LIMIT 1`,
  );
  const cursor = db.prepare<[string], { superseded: number; tested_at: number | null; test_dbid: number | null; test_error: string | null }>(
    'SELECT superseded, tested_at, test_dbid, test_error FROM output_cursors WHERE output = ?',
  );
  return (output) => {
    const count = counts.get(output);
    const finished = lastFinished.get(output);
    const success = lastSuccess.get(output);
    const error = lastError.get(output);
    const own = cursor.get(output);
    return {
      pending: count?.pending ?? 0,
      retrying: (count?.retrying ?? 0) === 1,
      superseded: own?.superseded ?? 0,
      lastFinished: finished ? { state: finished.state, at: finished.finished_at } : undefined,
      lastSuccess: success ? { at: success.finished_at, dbid: success.dbid, ...(success.receipt ? { receipt: success.receipt } : {}) } : undefined,
      lastError: error ? { at: error.at, message: error.error } : undefined,
      test: own?.tested_at != null ? { at: own.tested_at, dbid: own.test_dbid ?? 0, error: own.test_error } : undefined,
    };
  };
}

/** The change rows and the cursors that move them into the queues (SQLite is one writer: a transaction is the lock). */
function createChangeLog(db: Db) {
  // A message already queued for that output, record and kind is not added again; a held one is
  // released by the message of its record's end of enrichment, which brings the enriched record.
  const insert = db.prepare<[string, number, string, string, string, number, number, number | null], never>(
    `INSERT INTO output_messages (output, dbid, kind, message_id, payload, created_at, next_attempt_at, held_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (output, dbid, kind) DO UPDATE SET payload = excluded.payload, held_until = NULL
     WHERE output_messages.state = 'pending' AND output_messages.held_until IS NOT NULL AND excluded.held_until IS NULL`,
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
          ({ output, dbid, kind, messageId, payload, createdAt, heldUntil, notBefore }) =>
            insert.run(output, dbid, kind, messageId, payload, createdAt, notBefore ?? createdAt, heldUntil ?? null).changes > 0,
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
