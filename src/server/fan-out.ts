// Delivery to every local viewer never delays an HTTP answer (docs/several-instances.md "The
// answer does not wait for the push"): a track change reaches thousands of sockets, and sending
// to all of them at once held the event loop for tens of milliseconds, with the POST's own
// response still unwritten. Deliveries run later, a slice per event-loop turn, so answers and
// other I/O go out between slices. Each job takes its recipients as they are when it is asked
// for, and jobs run in the order they were asked for, so every viewer gets frames in order.

/** Recipients served per event-loop turn: small enough that a turn stays around a millisecond or two. */
const FAN_OUT_SLICE = 250;

interface Job<T> {
  targets: readonly T[];
  next: number;
  deliver: (target: T) => void;
}

export interface FanOut<T> {
  /** Delivers to each of `targets` (copied now), after the current turn, in slices. */
  send(targets: Iterable<T>, deliver: (target: T) => void): void;
  /** Drops the deliveries not yet made. */
  clear(): void;
}

export function createFanOut<T>(sliceSize = FAN_OUT_SLICE): FanOut<T> {
  const jobs: Job<T>[] = [];
  let scheduled: NodeJS.Immediate | undefined;

  const runSlice = () => {
    scheduled = undefined;
    let left = sliceSize;
    while (left > 0 && jobs.length > 0) {
      const job = jobs[0];
      const end = Math.min(job.targets.length, job.next + left);
      left -= end - job.next;
      for (; job.next < end; job.next += 1) deliverOne(job, job.targets[job.next]);
      if (job.next >= job.targets.length) jobs.shift();
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
