import { randomUUID } from 'node:crypto';
import { NO_METRICS, type CounterPort, type MetricsPort } from '../metrics';
import type { TrackRecord } from '../domain/track';
import { errorMessage } from '../errors';
import { throttledLog, type Logger } from '../log';
import { deadlineSignal, sleep } from '../signals';
import type { NowPlaying } from '../domain/current-track';
import type { MessageOf, OutputEvent, OutputMessage, OutputStore } from '../store/outputs';
import { MAX_ATTEMPTS_PER_MESSAGE, nextAttemptDelayMs } from './backoff';
import { HTTP_TIMEOUT_MS } from './http-send';
import type { Delivery, Output } from './output';
import { recordJson } from '../domain/play';

// Feeds record events to the outputs and delivers their queues (docs/outputs.md "Delivery").
// A stored track's change row is written with it by the store (docs/decisions.md "Delivery
// promises"); a submission waits only for its end-of-enrichment row. The changes are moved into
// the outputs' queues after the answer, in dbid order (and at start and every poll, for those a
// dead instance left). Each output has
// its own worker: a slow or dead target holds up only its own queue, never a submission, a
// stream or another output.

export interface DispatcherDeps {
  outputs: readonly Output[];
  /** Counts each attempt's outcome per output (docs/running.md "Metrics"). */
  metrics?: MetricsPort;
  store: OutputStore;
  nowPlaying: NowPlaying;
  logger: Logger;
  /**
   * How long a message made from a record still being enriched holds its output's queue, at most
   * (the enrichment deadline: docs/decisions.md "Delivery promises").
   */
  holdMs: number;
  /** `retryForSeconds` per output name (default 86400). */
  retryForSeconds: ReadonlyMap<string, number>;
  /** The channel an output is bound to, per output name (docs/channels.md "Outputs"); absent: every channel. */
  channels?: ReadonlyMap<string, string>;
  /** `delay` per output name, seconds (default 0): its messages wait this long after the change. */
  delaySeconds?: ReadonlyMap<string, number>;
  /** How often a worker looks at its queue without news (other instances, due retries). */
  pollMs?: number;
  /** Attempts per message at most (MAX_ATTEMPTS_PER_MESSAGE; tests use a few). */
  maxAttemptsPerMessage?: number;
  now?: () => number;
}

/** How long a shutdown waits for each output's own goodbye (docs/limits-and-load.md "Shutdown"). */
const OUTPUT_CLOSE_MS = 300;

export type OutputState = 'ok' | 'retrying' | 'failing';

export interface OutputStatus {
  name: string;
  type: string;
  target: string;
  state: OutputState;
  lastSuccess: { at: string; dbid: number; receipt?: string } | null;
  pending: number;
  /** Messages skipped for a newer one (current-state targets). */
  superseded: number;
  lastError: { at: string; message: string } | null;
}

export interface TestResult {
  name: string;
  outcome: Delivery['outcome'];
  status?: number;
  receipt?: string;
  error?: string;
  durationMs: number;
}

const DEFAULT_RETRY_FOR_SECONDS = 86_400;
const DEFAULT_POLL_MS = 1000;
/** A claim outlives the longest attempt; a dead owner's message is picked up after it. */
const LEASE_MS = HTTP_TIMEOUT_MS * 3;
const KEEP_FINISHED_MS = 7 * 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

interface Worker {
  output: Output;
  wake: () => void;
  done: Promise<void>;
}

export class OutputDispatcher {
  private readonly owner = randomUUID();
  private readonly workers = new Map<string, Worker>();
  private readonly stop = new AbortController();
  private readonly now: () => number;
  private readonly report: (kind: string, message: string) => void;
  private readonly unsubscribe: () => void;
  private readonly timers: NodeJS.Timeout[];
  /** The cursors exist: no change is recorded before, so a new output misses none of ours. */
  private readonly ready: Promise<void>;
  private readonly names: string[];
  private cursorsStarted = false;
  private expansion: { running: Promise<void>; again: boolean } | undefined;

  private readonly attempts: CounterPort;

  constructor(private readonly deps: DispatcherDeps) {
    this.now = deps.now ?? Date.now;
    this.attempts = (deps.metrics ?? NO_METRICS).counter(
      'svc_output_attempts_total',
      'Delivery attempts per output, by outcome: delivered, or failed (a retry or a give-up).',
      ['output', 'outcome'],
    );
    this.report = throttledLog((message) => deps.logger.warn(message));
    this.names = deps.outputs.map((output) => output.name);
    this.ready = this.startCursors();
    // The store wrote the change row with the record (a transactional outbox); it only needs moving.
    const onChanged = () => setImmediate(() => this.expandSoon());
    // Awaited by the submission: its change is in the store before the POST is answered.
    const stopSettled = deps.nowPlaying.onSettled((record) => this.record('settled', record.dbid, recordPayload(record)));
    const onDeleted = (dbid: number) => void this.record('deleted', dbid, JSON.stringify({ dbid }));
    // Keyed by the deleted dbid: the record current again was sent before, under its own dbid.
    const onRetracted = (dbid: number, current: TrackRecord | null) => void this.record('restored', dbid, current ? recordPayload(current) : '{}');
    deps.nowPlaying.on('track-changed', onChanged);
    deps.nowPlaying.on('track-deleted', onDeleted);
    deps.nowPlaying.on('track-retracted', onRetracted);
    this.unsubscribe = () => {
      deps.nowPlaying.off('track-changed', onChanged);
      stopSettled();
      deps.nowPlaying.off('track-deleted', onDeleted);
      deps.nowPlaying.off('track-retracted', onRetracted);
    };
    for (const output of deps.outputs) this.workers.set(output.name, this.startWorker(output));
    const pruneTimer = setInterval(() => {
      deps.store
        .prune(this.now() - KEEP_FINISHED_MS)
        .catch((error: unknown) => this.report('prune', `outputs: old deliveries not pruned: ${errorMessage(error)}`));
    }, PRUNE_EVERY_MS).unref();
    // Changes another instance recorded and did not queue (it died), or that this one recorded before a kill -9.
    const expandTimer = setInterval(() => this.expandSoon(), deps.pollMs ?? DEFAULT_POLL_MS).unref();
    this.timers = [pruneTimer, expandTimer];
    this.expandSoon();
  }

  async status(): Promise<OutputStatus[]> {
    return Promise.all(
      this.deps.outputs.map(async (output) => {
        const health = await this.deps.store.health(output.name);
        const state: OutputState = health.lastFinishedFailed && !health.retrying ? 'failing' : health.retrying ? 'retrying' : 'ok';
        return {
          name: output.name,
          type: output.type,
          target: output.target,
          state,
          lastSuccess: health.lastSuccess
            ? {
                at: new Date(health.lastSuccess.at).toISOString(),
                dbid: health.lastSuccess.dbid,
                ...(health.lastSuccess.receipt ? { receipt: health.lastSuccess.receipt } : {}),
              }
            : null,
          pending: health.pending,
          superseded: health.superseded,
          lastError: health.lastError ? { at: new Date(health.lastError.at).toISOString(), message: health.lastError.message } : null,
        };
      }),
    );
  }

  /** Whether an output of that name is configured. */
  has(name: string): boolean {
    return this.workers.has(name);
  }

  /** Sends `record` to one output now, outside its queue (`svc outputs test`); `name` is one has() knows. */
  async test(name: string, record: TrackRecord): Promise<TestResult> {
    const output = this.workers.get(name)?.output;
    if (!output) throw new Error(`no output named ${name}`);
    const createdAt = this.now();
    const message: OutputMessage = {
      id: 0,
      output: name,
      dbid: record.dbid,
      kind: 'track.changed',
      messageId: newMessageId(createdAt),
      payload: recordPayload(record),
      createdAt,
      attempts: 0,
    };
    const started = performance.now();
    const delivery = await this.attempt(output, message);
    // Any success, a test's too, returns the output to ok; a test's error is its last error.
    const error = delivery.outcome === 'delivered' ? {} : { error: delivery.error };
    await this.deps.store
      .recordTest(name, { at: this.now(), dbid: record.dbid, ...error })
      .catch((failure: unknown) => this.report('test', `outputs: test of ${name} not recorded: ${errorMessage(failure)}`));
    return { name, ...delivery, durationMs: Math.round(performance.now() - started) };
  }

  async close(): Promise<void> {
    this.unsubscribe();
    this.timers.forEach(clearInterval);
    this.stop.abort();
    await this.expansion?.running;
    for (const worker of this.workers.values()) worker.wake();
    await Promise.all([...this.workers.values()].map((worker) => worker.done));
    // A target that never answers (a frozen MQTT broker's PUBACK) does not hold the shutdown.
    const closing = Promise.all(this.deps.outputs.map((output) => output.close().catch(() => undefined)));
    await Promise.race([closing, sleep(OUTPUT_CLOSE_MS, undefined, { unref: true })]);
  }

  /** Never rejects: with the database down at start, each expansion tries again (a new output may then miss what came before). */
  private async startCursors(): Promise<void> {
    if (this.cursorsStarted || this.names.length === 0) return;
    try {
      await this.deps.store.startCursors(this.names);
      this.cursorsStarted = true;
    } catch (error) {
      this.report('cursors', `outputs: delivery queue unavailable: ${errorMessage(error)}`);
    }
  }

  /** Records the event once for every output (one row); settles when the store has it (never rejects). */
  private async record(event: OutputEvent, dbid: number, payload: string): Promise<void> {
    if (this.names.length === 0) return;
    await this.ready;
    try {
      await this.deps.store.record({ event, dbid, payload, createdAt: this.now() });
      // After the submission's answer has been written: nothing goes ahead of it.
      setImmediate(() => this.expandSoon());
    } catch (error) {
      this.report('record', `outputs: track ${dbid} not queued: ${errorMessage(error)}`);
    }
  }

  /** Moves recorded changes into the queues and wakes the outputs that got messages; one run at a time. */
  private expandSoon(): void {
    if (this.stop.signal.aborted || this.names.length === 0) return;
    if (this.expansion) {
      this.expansion.again = true;
      return;
    }
    const expansion = { again: false, running: Promise.resolve() };
    this.expansion = expansion;
    expansion.running = (async () => {
      await this.ready;
      await this.startCursors();
      try {
        let more = true;
        while (more && !this.stop.signal.aborted) {
          expansion.again = false;
          const answer = await this.deps.store.expand(this.names, this.messageOf);
          answer.added.forEach((name) => this.workers.get(name)?.wake());
          more = answer.more || expansion.again;
        }
      } catch (error) {
        this.report('expand', `outputs: changes not queued yet: ${errorMessage(error)}`);
      } finally {
        this.expansion = undefined;
      }
    })();
  }

  private readonly messageOf: MessageOf = (change, name) => {
    const feeds = this.workers.get(name)?.output.feeds;
    if (!feeds) return undefined;
    const bound = this.deps.channels?.get(name);
    if (bound !== undefined && !onChannel(change.payload, bound)) return undefined;
    // An output's `delay` (docs/play-log.md "During, but not before"): its messages wait that long after the change.
    const delayMs = (this.deps.delaySeconds?.get(name) ?? 0) * 1000;
    const message = {
      output: name,
      dbid: change.dbid,
      messageId: newMessageId(change.createdAt),
      payload: change.payload,
      createdAt: change.createdAt,
      ...(delayMs > 0 ? { notBefore: change.createdAt + delayMs } : {}),
    };
    const kind = feeds[change.event];
    if (kind) return { ...message, kind };
    // Told once enrichment ended: its place in the queue is taken at the change (dbid order),
    // held until the record's settled message releases it or the hold runs out.
    if (change.event === 'changed' && feeds.settled) return { ...message, kind: feeds.settled, heldUntil: change.createdAt + this.deps.holdMs };
    return undefined;
  };

  private startWorker(output: Output): Worker {
    let wakeUp: (() => void) | undefined;
    let woken = false;
    const worker: Worker = {
      output,
      wake: () => {
        woken = true;
        wakeUp?.();
      },
      done: Promise.resolve(),
    };
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        if (woken || this.stop.signal.aborted) return resolve();
        const timer = setTimeout(resolve, ms);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      }).finally(() => {
        wakeUp = undefined;
        woken = false;
      });
    worker.done = this.runWorker(output, pause);
    return worker;
  }

  private async runWorker(output: Output, pause: (ms: number) => Promise<void>): Promise<void> {
    const pollMs = this.deps.pollMs ?? DEFAULT_POLL_MS;
    await this.ready;
    while (!this.stop.signal.aborted) {
      try {
        const answer = await this.deps.store.claim(output.name, { owner: this.owner, now: this.now(), leaseMs: LEASE_MS, latestOnly: output.latestOnly });
        if (!answer) await pause(pollMs);
        else if ('waitMs' in answer) await pause(Math.min(Math.max(answer.waitMs, 10), pollMs));
        else await this.deliver(output, answer.message);
      } catch (error) {
        this.report(`queue ${output.name}`, `output ${output.name}: delivery queue unavailable: ${errorMessage(error)}`);
        await pause(pollMs);
      }
    }
  }

  private async deliver(output: Output, message: OutputMessage): Promise<void> {
    const started = this.now();
    const delivery = await this.attempt(output, message);
    const at = this.now();
    const attempts = message.attempts + 1;
    const retryForMs = (this.deps.retryForSeconds.get(output.name) ?? DEFAULT_RETRY_FOR_SECONDS) * 1000;
    const base = { at, durationMs: at - started, ...(delivery.status === undefined ? {} : { status: delivery.status }) };
    this.attempts.inc({ output: output.name, outcome: delivery.outcome === 'delivered' ? 'delivered' : 'failed' });
    if (delivery.outcome === 'delivered') {
      await this.deps.store.finish(message.id, { ...base, outcome: 'delivered', ...(delivery.receipt ? { receipt: delivery.receipt } : {}) });
      if (message.attempts > 0) this.deps.logger.info(`output ${output.name}: track ${message.dbid} delivered after ${attempts} attempts`);
      return;
    }
    const nextAttemptAt = delivery.outcome === 'retry' ? at + nextAttemptDelayMs(attempts, delivery.retryAfterMs) : undefined;
    if (
      nextAttemptAt !== undefined &&
      nextAttemptAt - message.createdAt <= retryForMs &&
      attempts < (this.deps.maxAttemptsPerMessage ?? MAX_ATTEMPTS_PER_MESSAGE)
    ) {
      await this.deps.store.finish(message.id, { ...base, outcome: 'retry', error: delivery.error, nextAttemptAt });
      if (message.attempts === 0) this.deps.logger.warn(`output ${output.name}: track ${message.dbid} not delivered (${delivery.error}); retrying`);
      return;
    }
    const why = delivery.outcome === 'retry' ? `${delivery.error}; gave up after ${attempts} attempts` : delivery.error;
    await this.deps.store.finish(message.id, { ...base, outcome: 'failed', error: why });
    this.deps.logger.warn(`output ${output.name}: track ${message.dbid} ${message.kind} failed: ${why}`);
  }

  private async attempt(output: Output, message: OutputMessage): Promise<Delivery> {
    const deadline = deadlineSignal(HTTP_TIMEOUT_MS, [this.stop.signal]);
    try {
      return await output.send(message, deadline.signal);
    } catch (error) {
      // A type's own bug or an unreadable cover: counted as a failed attempt, never thrown on.
      return { outcome: 'retry', error: `unexpected: ${errorMessage(error)}` };
    } finally {
      deadline.dispose();
    }
  }
}

/**
 * Whether a change's payload (a record's /v1/last object) is a play on `channel`. A payload that
 * names no channel (a deletion's `{dbid}`, `{}`) goes to every output: it cannot be told apart.
 */
function onChannel(payload: string, channel: string): boolean {
  try {
    const parsed: unknown = JSON.parse(payload);
    const named = typeof parsed === 'object' && parsed !== null && 'channel' in parsed ? parsed.channel : undefined;
    return typeof named !== 'string' || named === channel;
  } catch {
    return true;
  }
}

/** The /v1/last object of a stored record: what every output builds its message from. */
function recordPayload(record: TrackRecord): string {
  return JSON.stringify(recordJson(record));
}

/**
 * Standard Webhooks message ids: unique, the same on every retry. The creation time comes first,
 * so a change's rows go in at one end of the store's unique index (random ids touched a page
 * each, about 3 µs an output on every submission's answer); randomUUID's bytes make them unique
 * and come from a cache Node refills in bulk (a randomBytes(16) call per id cost about 9 µs).
 */
function newMessageId(now: number): string {
  return `msg_${now.toString(36).padStart(9, '0')}${randomUUID().replaceAll('-', '')}`;
}
