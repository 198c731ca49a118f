import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../errors';
import { sleep } from '../../signals';
import type { QueueBudget } from './queue-budget';
import { STALLED_READER_MS, dropWithConnection } from '../streams/stream-reply';

// Expensive answers (history pages, SSE replays, ...) run here, a few at a time, so cheap ones
// (/v1/status, /v1/last, the streams) never wait behind them (docs/limits-and-load.md "Expensive
// requests"). Fair between clients: each client (address) has its own queue and the free slot
// goes round them in turn, so one client with a hundred requests waits behind its own. Past the
// queue, or after waiting too long, the answer is 503 with Retry-After, never a long wait.

export interface WorkPoolOptions {
  /** Jobs running at once. */
  concurrency: number;
  /** Jobs waiting, all clients together. */
  maxQueued: number;
  /** Jobs one client may have waiting. */
  maxQueuedPerClient: number;
  /** A job still waiting after this long is answered 503. */
  maxWaitMs: number;
  /**
   * A client that asks again while its own queue is full (it ignored Retry-After) gets its 503
   * this much later: a flood of instant refusals would take the CPU the cheap answers need.
   */
  floodRefusalDelayMs: number;
}

const WORK_POOL_DEFAULTS: WorkPoolOptions = { concurrency: 1, maxQueued: 64, maxQueuedPerClient: 4, maxWaitMs: 5000, floodRefusalDelayMs: 250 };

/** Seconds a refused client is told to wait. */
const RETRY_AFTER_SECONDS = 1;

interface Job {
  start(): void;
  refuse(error: AppError): void;
}

export interface WorkPool {
  /**
   * Runs `work` when a slot is free and it is this client's turn. Rejects with a 503 AppError
   * when the queue is full or the wait too long; a job whose `signal` aborts while waiting is
   * dropped (rejected with the signal's reason).
   */
  run<T>(client: string, work: () => Promise<T>, abandoned?: () => AbortSignal): Promise<T>;
}

export function createWorkPool(options: Partial<WorkPoolOptions> = {}): WorkPool {
  const { concurrency, maxQueued, maxQueuedPerClient, maxWaitMs, floodRefusalDelayMs } = { ...WORK_POOL_DEFAULTS, ...options };
  // Insertion order is the round: a client that had its turn goes to the back.
  const queues = new Map<string, Job[]>();
  let queued = 0;
  let running = 0;

  const startNext = () => {
    while (running < concurrency) {
      const next = queues.entries().next();
      if (next.done) return;
      const [client, jobs] = next.value;
      queues.delete(client);
      const job = jobs.shift();
      if (jobs.length > 0) queues.set(client, jobs);
      if (!job) continue;
      queued -= 1;
      running += 1;
      job.start();
    }
  };
  // The next job starts from the event loop, not from the finished one's promise chain: the
  // sockets of cheap requests are read in between.
  const finished = () => {
    running -= 1;
    setImmediate(startNext);
  };

  return {
    run<T>(client: string, work: () => Promise<T>, abandoned?: () => AbortSignal): Promise<T> {
      if (running < concurrency && queued === 0) {
        running += 1;
        const result = Promise.resolve().then(work);
        result.then(finished, finished);
        return result;
      }
      const jobs = queues.get(client) ?? [];
      if (jobs.length >= maxQueuedPerClient) {
        return sleep(floodRefusalDelayMs, undefined, { unref: true }).then(() => Promise.reject(busy()));
      }
      if (queued >= maxQueued) return Promise.reject(busy());
      // Made only for a job that waits: under a flood most are refused at once.
      const signal = abandoned?.();
      return new Promise<T>((resolve, reject) => {
        const leave = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          const index = jobs.indexOf(job);
          if (index < 0) return false;
          jobs.splice(index, 1);
          if (jobs.length === 0 && queues.get(client) === jobs) queues.delete(client);
          queued -= 1;
          return true;
        };
        const job: Job = {
          start() {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            const result = Promise.resolve().then(work);
            result.then(finished, finished);
            result.then(resolve, reject);
          },
          refuse(error) {
            if (leave()) reject(error);
          },
        };
        const onAbort = () => {
          if (leave()) reject(signal?.reason);
        };
        const timer = setTimeout(() => job.refuse(busy()), maxWaitMs);
        timer.unref();
        signal?.addEventListener('abort', onAbort, { once: true });
        jobs.push(job);
        if (!queues.has(client)) queues.set(client, jobs);
        queued += 1;
      });
    },
  };
}

function busy(): AppError {
  // Thousands a second under a flood, and nobody reads their stack: capturing it was a tenth of
  // the server's time in bench/attack-fairness.bench.js.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new AppError('SERVER_BUSY', undefined, { headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } });
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/** Aborts when the connection of this response closes: a job still waiting for it is dropped (pass `() => requestGone(res)`). */
export function requestGone(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  response.once('close', () => controller.abort(new Error('client went away')));
  return controller.signal;
}

export interface ReplyReservation {
  /** Sets the reservation to the body's real size, once it is known. */
  resize(bytes: number): void;
}

/**
 * Counts a reply body in limits.maxQueuedBytes, like WebSocket frames (docs/limits-and-load.md
 * "Memory"): `bytes` are held from now until the answer has left for the kernel or the
 * connection is gone. When no room comes within the pool's wait, 503: clients that pipeline
 * requests and never read cost the budget, not memory without bound.
 */
export async function reserveReply(request: IncomingMessage, response: ServerResponse, budget: QueueBudget, bytes: number): Promise<ReplyReservation> {
  if (!(await budget.reserveWithin(bytes, WORK_POOL_DEFAULTS.maxWaitMs))) throw busy();
  let held = bytes;
  const stalled = setTimeout(() => dropWithConnection(response), STALLED_READER_MS);
  stalled.unref();
  const { socket } = request;
  const release = () => {
    clearTimeout(stalled);
    socket.off('close', release);
    budget.release(held);
    held = 0;
  };
  response.once('close', release);
  // A pipelined reply may never get the socket: its connection's close releases it too. Taken
  // off again when the reply is done, or a kept-alive connection would gather one per reply.
  socket.once('close', release);
  return {
    resize(size) {
      if (size > held) budget.take(size - held);
      else budget.release(held - size);
      held = size;
    },
  };
}
