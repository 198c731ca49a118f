// The one "forget the oldest" map: every in-memory cache of svc that must not grow without end
// (URL answers, decoded lookups, images being sliced or served from memory, image ids a client
// has shown) is one of these with its own bound. Pure; imports nothing.

export interface BoundedMapLimits<V> {
  /** At most this many entries (no count bound when left out). */
  maxEntries?: number;
  /** At most this total weight (sum of `weigh`); the entry set last stays even if it alone weighs more. */
  maxWeight?: number;
  /** The weight of a value (1 when left out); read once, when the value is set. */
  weigh?: (value: V) => number;
  /**
   * Which entry is the oldest. 'insertion' (the default): the one first set; setting or reading a
   * key again keeps its place. 'use': the least recently used, as get() and set() make an entry the newest.
   */
  order?: 'insertion' | 'use';
}

interface Slot<V> {
  value: V;
  weight: number;
}

/** A Map that forgets its oldest entries, on set(), past a count or a total weight. */
export class BoundedMap<K, V> {
  // A Map iterates in insertion order: its first key is the oldest.
  private readonly slots = new Map<K, Slot<V>>();
  private total = 0;
  private readonly maxEntries: number;
  private readonly maxWeight: number;
  private readonly weigh: (value: V) => number;
  private readonly byUse: boolean;
  /** The key set or read last: reading it again moves nothing (a burst reads one key a thousand times). */
  private newest: K | undefined;

  constructor(limits: BoundedMapLimits<V>) {
    this.maxEntries = limits.maxEntries ?? Infinity;
    this.maxWeight = limits.maxWeight ?? Infinity;
    this.weigh = limits.weigh ?? (() => 1);
    this.byUse = limits.order === 'use';
  }

  has(key: K): boolean {
    return this.slots.has(key);
  }

  /** The value; in 'use' order it becomes the newest entry. */
  get(key: K): V | undefined {
    const slot = this.slots.get(key);
    if (slot && this.byUse && key !== this.newest) {
      this.slots.delete(key);
      this.slots.set(key, slot);
      this.newest = key;
    }
    return slot?.value;
  }

  /** Forgets every entry. */
  clear(): void {
    this.slots.clear();
    this.total = 0;
  }

  /** Sets the value, then forgets the oldest other entries until both bounds hold. */
  set(key: K, value: V): this {
    const weight = this.weigh(value);
    const old = this.slots.get(key);
    if (old) {
      this.total -= old.weight;
      if (this.byUse) this.slots.delete(key);
    }
    this.slots.set(key, { value, weight });
    this.newest = key;
    this.total += weight;
    this.forgetOldest(key);
    return this;
  }

  private forgetOldest(keep: K): void {
    for (const [key, slot] of this.slots) {
      if (this.slots.size <= this.maxEntries && this.total <= this.maxWeight) return;
      if (key === keep) continue;
      this.slots.delete(key);
      this.total -= slot.weight;
    }
  }
}
