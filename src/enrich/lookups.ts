import { AsyncLocalStorage } from 'node:async_hooks';
import { errorMessage } from '../errors';
import { BoundedMap } from '../domain/bounded-map';
import { expiryOf, type CachedAnswer, type LookupCacheStore } from '../store/lookup-cache';
import { SharedFlights } from '../signals';
import { UpstreamError } from './http';
import type { ServiceHealth } from './service-health';

// Every lookup of an outside service goes through here (docs/enrichment.md): a live cached answer
// is used as is; identical lookups in flight at the same time share one request; the answer is
// cached (found or not found), a failure never is; a service that is not answering is paused for
// a few minutes instead (service-health.ts).

export interface LookupSpec<T> {
  service: string;
  /** Identifies the question (endpoint and parameters, never an API key). */
  key: string;
  /** Asks the service; resolves undefined for "not found" (e.g. 404). */
  fetch: (signal: AbortSignal) => Promise<unknown>;
  /**
   * Keeps the part of the answer svc uses, in the answer's own shape (so decoding a decoded
   * answer gives it back: the cache stores decoded answers and decodes them again on reading).
   * Returns null when the answer means "not found"; throws on an answer it cannot read.
   */
  decode: (raw: unknown) => T | null;
}

/** A lookup that was not cached while enrichment ran from the cache alone: expected, never news. */
export class NotCachedError extends UpstreamError {
  constructor(service: string) {
    super(service, 'not in the lookup cache', { transient: true });
    this.name = 'NotCachedError';
  }
}

/** Set while enrichment runs from the cache alone (answersFromCacheOnly). */
const cacheOnly = new AsyncLocalStorage<true>();

/**
 * Runs `work` with every lookup answered from the cache or not at all: a lookup that is not cached
 * fails at once, asking no service (docs/decisions.md "Complete frames": what the lookup cache
 * already knows goes into a track's first frame).
 */
export function answersFromCacheOnly<T>(work: () => Promise<T>): Promise<T> {
  return cacheOnly.run(true, work);
}

/** Decoded answers kept in memory, so a hot track costs no SQLite read, JSON parse or decode. */
const MEMORY_ENTRIES = 2000;

interface Remembered {
  value: unknown;
  expiresAt: number;
}

export class Lookups {
  /** Each flight's result was produced by the `decode` of the spec that started it (same service and key). */
  private readonly inFlight = new SharedFlights<unknown>();
  private readonly memory = new BoundedMap<string, Remembered>({ maxEntries: MEMORY_ENTRIES, order: 'use' });

  constructor(
    private readonly cache: LookupCacheStore,
    private readonly now: () => number = Date.now,
    private readonly health?: ServiceHealth,
  ) {}

  async get<T>(spec: LookupSpec<T>, signal: AbortSignal): Promise<T | null> {
    signal.throwIfAborted();
    const flightKey = `${spec.service}\n${spec.key}`;
    const remembered = this.memory.get(flightKey);
    // Stored by this same spec (service and key) below.
    if (remembered && remembered.expiresAt > this.now()) return remembered.value as T | null;

    // A cache the database cannot answer now is a miss: the service is asked instead.
    const cached = await this.cache.get(spec.service, spec.key).catch(() => undefined);
    if (cached) {
      const value = cached.found ? decodeCached(spec, cached.answer) : null;
      if (value !== UNREADABLE) {
        this.remember(flightKey, value, cached.expiresAt);
        return value;
      }
    }

    if (cacheOnly.getStore()) throw new NotCachedError(spec.service);
    this.health?.check(spec.service);
    return (await this.inFlight.run(flightKey, (flightSignal) => this.fetchAndCache(spec, flightKey, flightSignal), signal)) as T | null;
  }

  private remember(key: string, value: unknown, expiresAt: number): void {
    this.memory.set(key, { value, expiresAt });
  }

  private async fetchAndCache<T>(spec: LookupSpec<T>, flightKey: string, signal: AbortSignal): Promise<T | null> {
    let raw: unknown;
    this.health?.asked(spec.service);
    try {
      raw = await spec.fetch(signal);
    } catch (error) {
      // Given up by every caller (a deadline) says nothing about the service.
      if (!signal.aborted) this.health?.failed(spec.service, error);
      throw error;
    }
    const value = raw === undefined ? null : decodeFresh(spec, raw);
    const answer: CachedAnswer = value === null ? { found: false } : { found: true, answer: JSON.stringify(value) };
    // An answer the database cannot keep now is still this lookup's answer, remembered in memory.
    const expiresAt = await this.cache.put(spec.service, spec.key, answer).catch(() => expiryOf(answer, this.now()));
    this.remember(flightKey, value, expiresAt);
    return value;
  }
}

function decodeFresh<T>(spec: LookupSpec<T>, raw: unknown): T | null {
  try {
    return spec.decode(raw);
  } catch (cause) {
    if (cause instanceof UpstreamError) throw cause;
    throw new UpstreamError(spec.service, `unreadable answer: ${errorMessage(cause)}`, { transient: true, cause });
  }
}

const UNREADABLE = Symbol('unreadable cached answer');

function decodeCached<T>(spec: LookupSpec<T>, answer: string): T | null | typeof UNREADABLE {
  try {
    return spec.decode(JSON.parse(answer) as unknown);
  } catch {
    // A row svc cannot read any more (e.g. written by another version) is asked again.
    return UNREADABLE;
  }
}
