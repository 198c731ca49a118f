import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// Giving back the young generation after a burst (docs/limits-and-load.md "What one record
// costs"). V8 doubles its young generation while a burst of requests keeps objects alive across
// collections (to 16 MiB per semi-space on 64-bit Node 20) and keeps it: it shrinks it only at a
// young-generation collection made while its measured allocation rate is low, and an idle server
// allocates too little to start one. So once the server has been quiet for a while after some
// work, it runs one such collection itself (a few milliseconds). Not while an audience is
// connected: the next push to thousands of sockets allocates enough to need the grown young
// generation again, and a smaller one was measured to slow that push.

export interface IdleHeapOptions {
  /** Open connections from which the young generation is kept for the next push. */
  audience: number;
  /** Quiet time before the collection: more than V8's 5 s allocation-rate window. */
  quietMs: number;
  /** How often the event loop's utilization is read. */
  checkMs: number;
  /** Utilization under which an interval counts as quiet. */
  quietUtilization: number;
}

export const IDLE_HEAP_DEFAULTS: IdleHeapOptions = { audience: 100, quietMs: 6_000, checkMs: 1_000, quietUtilization: 0.02 };

/** What one reading of the event loop saw. */
export interface LoopReading {
  /** Event-loop utilization over the interval, 0 to 1. */
  utilization: number;
  elapsedMs: number;
  connections: number;
}

/** Collections tried per quiet spell when V8 keeps the young generation (see QuietSpell.collected). */
export const ATTEMPTS_PER_SPELL = 3;

/**
 * When to collect, from successive readings: after `quietMs` of quiet that follows work, with
 * fewer than `audience` connections open; again after another `quietMs` when V8 kept the young
 * generation, up to ATTEMPTS_PER_SPELL times; then not until more work. Pure.
 */
export class QuietSpell {
  private quietForMs = 0;
  /** Work was seen since the young generation was last given back (start-up counts as work). */
  private worked = true;
  private attempts = 0;
  /** The last reading found a quiet spell after work, but an audience was connected. */
  heldForAudience = false;

  constructor(private readonly options: Pick<IdleHeapOptions, 'audience' | 'quietMs' | 'quietUtilization'>) {}

  /** Whether to collect now. */
  observe(reading: LoopReading): boolean {
    if (reading.utilization >= this.options.quietUtilization) {
      this.quietForMs = 0;
      this.worked = true;
      this.attempts = 0;
      return false;
    }
    this.quietForMs += reading.elapsedMs;
    this.heldForAudience = this.worked && this.quietForMs >= this.options.quietMs && reading.connections >= this.options.audience;
    if (!this.worked || this.quietForMs < this.options.quietMs || reading.connections >= this.options.audience) return false;
    this.quietForMs = 0;
    this.attempts += 1;
    return true;
  }

  /**
   * What the collection did. V8 gives the young generation back only when the allocation rate it
   * measured over its last 5 s is low; a collection of its own in the quiet spell (one it
   * scheduled when the burst ended) can leave the burst inside that window. Another quiet
   * `quietMs` after our collection leaves only quiet in it.
   */
  collected(gaveBack: boolean): void {
    if (gaveBack || this.attempts >= ATTEMPTS_PER_SPELL) {
      this.worked = false;
      this.attempts = 0;
    }
  }
}

type YoungCollection = () => void;

/**
 * V8's collection function without `--expose-gc` on the command line: the flag is set only while a
 * new context is made, which then carries `gc`.
 */
function youngCollection(): YoungCollection | undefined {
  let gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== 'function') {
    setFlagsFromString('--expose-gc');
    try {
      gc = runInNewContext('gc');
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  if (typeof gc !== 'function') return undefined;
  const collect = gc as (options: { type: 'minor' }) => void;
  return () => collect({ type: 'minor' });
}

/** The committed size of V8's young generation (both semi-spaces). */
function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

/** What the watcher decided at the end of a quiet spell: tests wait for it instead of the clock. */
export type IdleHeapDecision = 'collected' | 'kept for the audience';

export interface IdleHeap {
  stop(): void;
}

/** Watches the event loop and collects the young generation once per quiet spell after work. */
export function collectWhenIdle(
  openConnections: () => number,
  options: IdleHeapOptions = IDLE_HEAP_DEFAULTS,
  onDecision: (decision: IdleHeapDecision) => void = () => undefined,
): IdleHeap {
  const spell = new QuietSpell(options);
  let collect: YoungCollection | undefined;
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const current = performance.eventLoopUtilization();
    // The difference of two readings: its idle and active times add up to the interval.
    const { utilization, idle, active } = performance.eventLoopUtilization(current, last);
    last = current;
    if (!spell.observe({ utilization, elapsedMs: idle + active, connections: openConnections() })) {
      if (spell.heldForAudience) onDecision('kept for the audience');
      return;
    }
    collect ??= youngCollection();
    const before = youngGenerationBytes();
    collect?.();
    spell.collected(youngGenerationBytes() < before);
    onDecision('collected');
  }, options.checkMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
