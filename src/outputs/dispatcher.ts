import { randomUUID } from 'node:crypto';
import type { NowPlaying } from '../domain/current-track';
import type { TrackRecord } from '../domain/track';
import { errorMessage } from '../errors';
import { throttledLog, type Logger } from '../log';
import { NO_METRICS, type CounterPort, type MetricsPort } from '../metrics';
import { sleep } from '../signals';
import type { OutputMessage, OutputStore } from '../store/outputs';
import { MAX_ATTEMPTS_PER_MESSAGE } from './backoff';
import { attempt, deliverer } from './dispatch/delivery';
import { ChangeFanOut } from './dispatch/fan-out';
import { messageMaker, newMessageId, recordPayload } from './dispatch/messages';
import { feedRecordEvents } from './dispatch/record-events';
import type { RetryRules } from './dispatch/settle';
import { statusOf, type OutputStatus } from './dispatch/status';
import { startWorker, type Worker } from './dispatch/worker';
import { HTTP_TIMEOUT_MS } from './http-send';
import type { Delivery, Output } from './output';

export type { OutputState, OutputStatus } from './dispatch/status';

// Feeds record events to the outputs and delivers their queues (docs/outputs.md "Delivery").
// A stored track's change row is written with it by the store (docs/decisions.md "Delivery
// promises"); a submission waits only for its end-of-enrichment row. The changes are moved into
// the outputs' queues after the answer, in dbid order (and at start and every poll, for those a
// dead instance left). Each output has its own worker: a slow or dead target holds up only its
// own queue, never a submission, a stream or another output. The parts, in src/outputs/dispatch/:
// record-events.ts (what is heard), fan-out.ts (recorded once, moved into the queues),
// messages.ts (which message each output gets), worker.ts (one output's queue), delivery.ts and
// settle.ts (an attempt and where the message goes next), status.ts (GET /v1/outputs).

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

export class OutputDispatcher {
  private readonly workers = new Map<string, Worker>();
  private readonly stop = new AbortController();
  private readonly now: () => number;
  private readonly report: (kind: string, message: string) => void;
  private readonly fanOut: ChangeFanOut;
  private readonly unsubscribe: () => void;
  private readonly timers: NodeJS.Timeout[];

  constructor(private readonly deps: DispatcherDeps) {
    const now = deps.now ?? Date.now;
    const stop = this.stop.signal;
    const report = throttledLog((message) => deps.logger.warn(message));
    this.now = now;
    this.report = report;
    const outputs = new Map(deps.outputs.map((output) => [output.name, output]));
    const messageOf = messageMaker({ outputs, holdMs: deps.holdMs, channels: deps.channels, delaySeconds: deps.delaySeconds });
    const names = deps.outputs.map((output) => output.name);
    this.fanOut = new ChangeFanOut({ store: deps.store, names, messageOf, wake: (name) => this.workers.get(name)?.wake(), now, stop, report });
    this.unsubscribe = feedRecordEvents(deps.nowPlaying, this.fanOut);
    const pollMs = deps.pollMs ?? DEFAULT_POLL_MS;
    const deliver = deliverer({
      store: deps.store,
      logger: deps.logger,
      attempts: attemptCounter(deps.metrics),
      now,
      stop,
      rulesOf: (name) => this.rulesOf(name),
    });
    const workerDeps = { store: deps.store, owner: randomUUID(), leaseMs: LEASE_MS, pollMs, now, stop, ready: this.fanOut.ready, deliver, report };
    for (const output of deps.outputs) this.workers.set(output.name, startWorker(output, workerDeps));
    this.timers = this.startUpkeep(pollMs);
    this.fanOut.expandSoon();
  }

  async status(): Promise<OutputStatus[]> {
    return Promise.all(this.deps.outputs.map(async (output) => statusOf(output, await this.deps.store.health(output.name))));
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
    const delivery = await attempt(output, message, this.stop.signal);
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
    await this.fanOut.drained();
    for (const worker of this.workers.values()) worker.wake();
    await Promise.all([...this.workers.values()].map((worker) => worker.done));
    // A target that never answers (a frozen MQTT broker's PUBACK) does not hold the shutdown.
    const closing = Promise.all(this.deps.outputs.map((output) => output.close().catch(() => undefined)));
    await Promise.race([closing, sleep(OUTPUT_CLOSE_MS, undefined, { unref: true })]);
  }

  private rulesOf(name: string): RetryRules {
    const retryForMs = (this.deps.retryForSeconds.get(name) ?? DEFAULT_RETRY_FOR_SECONDS) * 1000;
    return { retryForMs, maxAttempts: this.deps.maxAttemptsPerMessage ?? MAX_ATTEMPTS_PER_MESSAGE };
  }

  /** The hourly prune of finished deliveries, and the poll for changes no run moved yet. */
  private startUpkeep(pollMs: number): NodeJS.Timeout[] {
    const pruneTimer = setInterval(() => {
      this.deps.store
        .prune(this.now() - KEEP_FINISHED_MS)
        .catch((error: unknown) => this.report('prune', `outputs: old deliveries not pruned: ${errorMessage(error)}`));
    }, PRUNE_EVERY_MS).unref();
    // Changes another instance recorded and did not queue (it died), or that this one recorded before a kill -9.
    const expandTimer = setInterval(() => this.fanOut.expandSoon(), pollMs).unref();
    return [pruneTimer, expandTimer];
  }
}

function attemptCounter(metrics: MetricsPort | undefined): CounterPort {
  return (metrics ?? NO_METRICS).counter(
    'svc_output_attempts_total',
    'Delivery attempts per output, by outcome: delivered, or failed (a retry or a give-up).',
    ['output', 'outcome'],
  );
}
