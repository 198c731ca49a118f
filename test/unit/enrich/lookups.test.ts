import { setMaxListeners } from 'node:events';
import { UpstreamError } from '../../../src/enrich/http';
import { Lookups, type LookupSpec } from '../../../src/enrich/lookups';
import { openDatabase, type Db } from '../../../src/store/sqlite/database';
import { createLookupCacheStore } from '../../../src/store/sqlite/lookup-cache';

// The times to live of docs/enrichment.md (its "Cache" paragraph): found for 7 days, "not found" for 1 day.
const FOUND_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const NOT_FOUND_TTL_MS = 24 * 60 * 60 * 1000;

interface Answer {
  name: string;
}

const decodeAnswer = (raw: unknown): Answer | null => {
  if (typeof raw !== 'object' || raw === null) throw new Error('not an object');
  const name = (raw as Record<string, unknown>).name;
  if (name === null) return null;
  if (typeof name !== 'string') throw new Error('no name');
  return { name };
};

describe('Lookups (cache and coalescing)', () => {
  let db: Db;
  let now: number;
  let lookups: Lookups;
  const signal = new AbortController().signal;
  // One signal shared by 100 waiters below, as a submission's signal is shared by its lookups.
  setMaxListeners(0, signal);

  beforeEach(() => {
    db = openDatabase(':memory:');
    now = 1_700_000_000_000;
    lookups = new Lookups(
      createLookupCacheStore(db, () => now),
      () => now,
    );
  });
  afterEach(() => db.close());

  const spec = (fetch: LookupSpec<Answer>['fetch'], key = 'artist/1'): LookupSpec<Answer> => ({ service: 'svc-test', key, fetch, decode: decodeAnswer });

  it('When a lookup was answered, then the same lookup is served from the cache until the found TTL ends', async () => {
    const fetch = jest.fn(async () => ({ name: 'Massive Attack', extra: 'dropped' }));
    expect(await lookups.get(spec(fetch), signal)).toEqual({ name: 'Massive Attack' });
    now += FOUND_TTL_MS - 1;
    expect(await lookups.get(spec(fetch), signal)).toEqual({ name: 'Massive Attack' });
    expect(fetch).toHaveBeenCalledTimes(1);
    now += 2;
    await lookups.get(spec(fetch), signal);
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  it('When the service said "not found" (404 or an empty answer), then that is cached for the not-found TTL', async () => {
    const missing = jest.fn(async () => undefined);
    const empty = jest.fn(async () => ({ name: null }));
    expect(await lookups.get(spec(missing, 'a'), signal)).toBeNull();
    expect(await lookups.get(spec(empty, 'b'), signal)).toBeNull();
    now += NOT_FOUND_TTL_MS - 1;
    await lookups.get(spec(missing, 'a'), signal);
    await lookups.get(spec(empty, 'b'), signal);
    expect(missing).toHaveBeenCalledTimes(1);
    expect(empty).toHaveBeenCalledTimes(1);
    now += 2;
    await lookups.get(spec(missing, 'a'), signal);
    expect(missing).toHaveBeenCalledTimes(2);
  });

  it('When a lookup fails or its answer is unreadable, then nothing is cached and the next lookup asks again', async () => {
    const failing = jest.fn(async () => {
      throw new UpstreamError('svc-test', 'HTTP 503', { status: 503, transient: true });
    });
    await expect(lookups.get(spec(failing), signal)).rejects.toThrow('HTTP 503');
    const unreadable = jest.fn(async () => ({ name: 42 }));
    await expect(lookups.get(spec(unreadable), signal)).rejects.toThrow(UpstreamError);
    const working = jest.fn(async () => ({ name: 'Portishead' }));
    expect(await lookups.get(spec(working), signal)).toEqual({ name: 'Portishead' });
    expect(working).toHaveBeenCalledTimes(1);
  });

  it('When 100 identical lookups are in flight at once, then the service is asked once and all get the answer', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const fetch = jest.fn(async () => {
      await gate;
      return { name: 'Daft Punk' };
    });
    const all = Promise.all(Array.from({ length: 100 }, () => lookups.get(spec(fetch), signal)));
    release();
    const answers = await all;
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(new Set(answers.map((answer) => answer?.name))).toEqual(new Set(['Daft Punk']));
  });

  it('When one waiter gives up, then the shared lookup goes on for the others; when all give up, then it is cancelled', async () => {
    let seenSignal: AbortSignal | undefined;
    let release: () => void = () => undefined;
    let started: () => void = () => undefined;
    let gate = new Promise<void>((resolve) => (release = resolve));
    const fetch = jest.fn(async (flightSignal: AbortSignal) => {
      seenSignal = flightSignal;
      started();
      await gate;
      return { name: 'Björk' };
    });
    const first = new AbortController();
    const second = new AbortController();
    // The cache is read asynchronously: the flight has begun once fetch is called.
    const flying = new Promise<void>((resolve) => (started = resolve));
    const a = lookups.get(spec(fetch), first.signal);
    const b = lookups.get(spec(fetch), second.signal);
    await flying;
    first.abort(new Error('first deadline'));
    await expect(a).rejects.toThrow('first deadline');
    expect(seenSignal?.aborted).toBe(false);
    release();
    expect(await b).toEqual({ name: 'Björk' });

    gate = new Promise<void>(() => undefined);
    const thirdFlying = new Promise<void>((resolve) => (started = resolve));
    const third = new AbortController();
    const c = lookups.get(spec(fetch, 'artist/2'), third.signal);
    await thirdFlying;
    third.abort(new Error('third deadline'));
    await expect(c).rejects.toThrow('third deadline');
    expect(seenSignal?.aborted).toBe(true);
  });

  it('When a cached answer is read back, then decoding it again gives the same value (decoders are idempotent)', async () => {
    await lookups.get(
      spec(async () => ({ name: 'Moderat', noise: [1, 2, 3] })),
      signal,
    );
    const row = db.prepare('SELECT answer FROM lookup_cache').get() as { answer: string };
    expect(JSON.parse(row.answer)).toEqual({ name: 'Moderat' });
  });
});
