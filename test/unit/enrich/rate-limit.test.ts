import { anySignal } from '../../../src/signals';
import { RateLimiter } from '../../../src/enrich/rate-limit';
import { ManualLimiterClock as ManualClock, settle } from '../../helpers/limiter-clock';

// The limiter runs on a manual clock here (test/helpers/limiter-clock.ts): the tests move time
// themselves instead of waiting for it. The real 1 s MusicBrainz interval is tested end to end in
// test/integration/enrichment-rate.test.ts.

describe('RateLimiter', () => {
  it('When many callers take turns at once, then their starts are one interval apart, in arrival order', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter(1000, clock);
    const starts: { index: number; at: number }[] = [];
    const signal = new AbortController().signal;
    const all = Promise.all(Array.from({ length: 6 }, (_, index) => limiter.take(signal).then(() => starts.push({ index, at: clock.now() }))));
    await settle();
    expect(starts).toEqual([{ index: 0, at: 0 }]);
    await clock.advance(999);
    expect(starts).toHaveLength(1);
    await clock.advance(5000);
    await all;
    expect(starts).toEqual([0, 1, 2, 3, 4, 5].map((index) => ({ index, at: index * 1000 })));
  });

  it('When a waiting caller aborts, then it leaves the queue and the next caller takes its turn', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter(1000, clock);
    const never = new AbortController().signal;
    await limiter.take(never);
    const leaving = new AbortController();
    const left = limiter.take(leaving.signal);
    let stayedAt: number | undefined;
    const staying = limiter.take(never).then(() => (stayedAt = clock.now()));
    leaving.abort(new Error('deadline'));
    await expect(left).rejects.toThrow('deadline');
    await clock.advance(999);
    expect(stayedAt).toBeUndefined();
    await clock.advance(1);
    await staying;
    // The turn the leaver gave up went to the next caller, and nobody is left queued before a new one.
    expect(stayedAt).toBe(1000);
    let nextAt: number | undefined;
    const next = limiter.take(never).then(() => (nextAt = clock.now()));
    await clock.advance(1000);
    await next;
    expect(nextAt).toBe(2000);
  });

  it('When the service asks to pause, then nobody starts before the pause ends', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter(10, clock);
    const signal = new AbortController().signal;
    await limiter.take(signal);
    limiter.pauseFor(3000);
    let startedAt: number | undefined;
    const next = limiter.take(signal).then(() => (startedAt = clock.now()));
    await clock.advance(2999);
    expect(startedAt).toBeUndefined();
    await clock.advance(1);
    await next;
    expect(startedAt).toBe(3000);
  });

  it('When the signal is already aborted, then take rejects at once', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(new RateLimiter(1000, new ManualClock()).take(controller.signal)).rejects.toThrow('gone');
  });
});

describe('anySignal (AbortSignal.any for Node 20.0-20.2)', () => {
  const original = AbortSignal.any;
  beforeEach(() => {
    (AbortSignal as { any?: unknown }).any = undefined;
  });
  afterEach(() => {
    AbortSignal.any = original;
  });

  it('aborts with the reason of whichever signal aborts first', () => {
    const a = new AbortController();
    const b = new AbortController();
    const combined = anySignal([a.signal, b.signal]);
    expect(combined.aborted).toBe(false);
    b.abort(new Error('second'));
    expect(combined.aborted).toBe(true);
    expect((combined.reason as Error).message).toBe('second');
  });

  it('is aborted at once when a signal already is', () => {
    const a = new AbortController();
    a.abort('gone');
    expect(anySignal([a.signal, new AbortController().signal]).reason).toBe('gone');
  });
});
