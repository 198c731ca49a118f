import type { LimiterClock } from '../../src/enrich/rate-limit';

// The rate limiter's clock (src/enrich/rate-limit.ts LimiterClock) moved by the test: the
// limiter's waits (its interval, a Retry-After it was told) are then proven by order, never timed
// (docs/architecture.md "Time in tests").

/** Time that moves only when told to; due callbacks fire in time order. */
export class ManualLimiterClock implements LimiterClock {
  private time = 0;
  private timers: { at: number; fire: () => void }[] = [];

  now(): number {
    return this.time;
  }

  schedule(fire: () => void, ms: number): () => void {
    const timer = { at: this.time + ms, fire };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((other) => other !== timer);
    };
  }

  /** When the callbacks waiting now are due, soonest first (the signal that the limiter decided to wait). */
  dueTimes(): number[] {
    return this.timers.map((timer) => timer.at).sort((a, b) => a - b);
  }

  /** Moves time forward by `ms`, firing each due callback at its own time, then lets promises settle. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (;;) {
      const due = this.timers.filter((timer) => timer.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.time = due.at;
      due.fire();
      await settle();
    }
    this.time = until;
    await settle();
  }
}

/** Lets every already-resolved promise chain run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
