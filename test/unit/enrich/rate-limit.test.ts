import { anySignal } from '../../../src/enrich/http';
import { RateLimiter } from '../../../src/enrich/rate-limit';

// The limiter's interval is injectable so this runs fast; the real 1 s MusicBrainz interval is
// tested end to end in test/integration/enrichment-rate.test.ts.

describe('RateLimiter', () => {
  it('When many callers take turns at once, then their starts are at least one interval apart, in arrival order', async () => {
    const limiter = new RateLimiter(40);
    const starts: { index: number; at: number }[] = [];
    const signal = new AbortController().signal;
    await Promise.all(
      Array.from({ length: 6 }, (_, index) => limiter.take(signal).then(() => starts.push({ index, at: performance.now() }))),
    );
    expect(starts.map((start) => start.index)).toEqual([0, 1, 2, 3, 4, 5]);
    for (let i = 1; i < starts.length; i += 1) {
      expect((starts[i]?.at ?? 0) - (starts[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(39);
    }
  });

  it('When a waiting caller aborts, then it leaves the queue and the next caller takes its turn', async () => {
    const limiter = new RateLimiter(60);
    const never = new AbortController().signal;
    await limiter.take(never);
    const leaving = new AbortController();
    const left = limiter.take(leaving.signal);
    const staying = limiter.take(never);
    leaving.abort(new Error('deadline'));
    await expect(left).rejects.toThrow('deadline');
    expect(limiter.waiting).toBe(1);
    await staying;
    expect(limiter.waiting).toBe(0);
  });

  it('When the service asks to pause, then nobody starts before the pause ends', async () => {
    const limiter = new RateLimiter(10);
    const signal = new AbortController().signal;
    await limiter.take(signal);
    const pausedAt = performance.now();
    limiter.pauseFor(120);
    await limiter.take(signal);
    expect(performance.now() - pausedAt).toBeGreaterThanOrEqual(115);
  });

  it('When the signal is already aborted, then take rejects at once', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(new RateLimiter(1000).take(controller.signal)).rejects.toThrow('gone');
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
