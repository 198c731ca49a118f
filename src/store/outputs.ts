// The durable delivery log of the outputs (docs/outputs.md "Delivery"). A record event is one
// change row, however many outputs there are (the only write a submission waits for); each
// output's cursor then moves the changes after it into that output's queue as messages. Every
// message and every attempt is a row, so a pending delivery survives a restart or kill -9. A
// message is unique per output, record and kind, so several instances that see one change queue
// it once; a delivery is claimed in the database (a lease), so exactly one instance sends it.
// This file is the contract and the row rules both backends share (sqlite/outputs.ts, postgres/outputs.ts).

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
