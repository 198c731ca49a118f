/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import type { Db } from './database';
import {
  AttemptResult,
  ChangeRow,
  ClaimAnswer,
  ClaimOptions,
  EXPAND_BATCH,
  HealthRows,
  MessageOf,
  MessageRow,
  NewOutputChange,
  OutputStore,
  OutputTest,
  changeOf,
  expansionOf,
  headWait,
  healthOf,
  messageOf,
  stateAfter,
  trackPayload,
} from '../outputs';

export function createOutputStore(db: Db): OutputStore {
  // The newest pending message is the newest record's (then the last queued of it), not the last
  // queued: instances and late ends of enrichment queue records out of dbid order (docs/outputs.md
  // "Delivery"). The other pending ones, and those for a record older than the newest shown, give
  // way (latestOnly).
  const NEWEST = `(SELECT id FROM output_messages WHERE output = @output AND state = 'pending' ORDER BY dbid DESC, id DESC LIMIT 1)`;
  const supersede = db.prepare<[{ output: string; now: number }], never>(
    `UPDATE output_messages SET state = 'superseded', finished_at = @now
     WHERE output = @output AND state = 'pending' AND coalesce(claimed_until, 0) < @now
       AND (id <> ${NEWEST} OR dbid < (SELECT shown_dbid FROM output_cursors WHERE output = @output))`,
  );
  const countSuperseded = db.prepare<[number, string], never>('UPDATE output_cursors SET superseded = superseded + ? WHERE output = ?');
  // The newest takes over the output's wait and attempt count: a rate limit or an outage holds
  // the output, not one message, so superseding never sends early.
  const inherit = db.prepare<[{ output: string; now: number }], never>(
    `UPDATE output_messages SET
       next_attempt_at = max(next_attempt_at, (SELECT max(next_attempt_at) FROM output_messages WHERE output = @output AND state = 'pending')),
       attempts = max(attempts, (SELECT max(attempts) FROM output_messages WHERE output = @output AND state = 'pending'))
     WHERE id = ${NEWEST}
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
