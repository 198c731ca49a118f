import { performance } from 'node:perf_hooks';

// Delivery to every local viewer never delays an HTTP answer (docs/several-instances.md "The
// answer does not wait for the push"): a track change reaches thousands of sockets, and sending
// to all of them at once held the event loop for tens of milliseconds, with the POST's own
// response still unwritten. Deliveries run later, a slice per event-loop turn, so answers and
// other I/O go out between slices. A slice is measured in time, not in recipients
// (docs/limits-and-load.md "Fan-out slices"): a request that arrives mid-fan-out waits at most
// one slice, however slow each write is today. Each job takes its recipients as they are when it
// is asked for, and jobs run in the order they were asked for, so every viewer gets frames in order.

/** Time one event-loop turn spends delivering before it lets answers and other I/O out. */
const FAN_OUT_SLICE_MS = 1;

interface Job<T> {
  targets: readonly T[];
  next: number;
  deliver: (target: T) => void;
}

export interface FanOutOptions {
  /** Milliseconds of deliveries per turn; at least one delivery is made per turn whatever it costs. */
  sliceMs?: number;
  /** The clock slices are measured with (tests step it). */
  now?: () => number;
}

export interface FanOut<T> {
  /** Delivers to each of `targets` (copied now), after the current turn, in slices. */
  send(targets: Iterable<T>, deliver: (target: T) => void): void;
  /** Drops the deliveries not yet made. */
  clear(): void;
}

export function createFanOut<T>(options: FanOutOptions = {}): FanOut<T> {
  const sliceMs = options.sliceMs ?? FAN_OUT_SLICE_MS;
  const now = options.now ?? (() => performance.now());
  const jobs: Job<T>[] = [];
  let scheduled: NodeJS.Immediate | undefined;

  const runSlice = () => {
    scheduled = undefined;
    const until = now() + sliceMs;
    while (jobs.length > 0) {
      const job = jobs[0];
      deliverOne(job, job.targets[job.next]);
      job.next += 1;
      if (job.next >= job.targets.length) jobs.shift();
      if (now() >= until) break;
    }
    if (jobs.length > 0) scheduled = setImmediate(runSlice);
  };

  return {
    send(targets, deliver) {
      const copy = [...targets];
      if (copy.length === 0) return;
      jobs.push({ targets: copy, next: 0, deliver });
      scheduled ??= setImmediate(runSlice);
    },
    clear() {
      jobs.length = 0;
      if (scheduled) clearImmediate(scheduled);
      scheduled = undefined;
    },
  };
}

function deliverOne<T>(job: Job<T>, target: T): void {
  try {
    job.deliver(target);
  } catch {
    // A delivery runs outside any request: one recipient's failure (a socket closing under it)
    // must cost that recipient only, never the process or the recipients after it.
  }
}
