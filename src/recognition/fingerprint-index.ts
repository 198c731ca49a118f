// The library's fingerprints as an inverted index, and the search of a window of live audio
// against it (docs/recognition.md "Matching"), after the design of AcoustID's stream mode: an
// item's top KEY_BITS bits (Chromaprint's first ten classifiers) point at every place, in every
// track, where an item with those bits occurs; the places a window's items point at vote for an
// alignment; the best alignments are scored by the share of bits that differ over the whole
// window; a score past the threshold is a match. Pure: no I/O, no clock.

/** Bits of an item that make its key: 2^KEY_BITS buckets, one Uint32 each. */
export const KEY_BITS = 20;
const KEY_SHIFT = 32 - KEY_BITS;
/** A key seen at more places than this says nothing (silence, a drone): it does not vote. */
const MAX_BUCKET = 4096;
/** Alignments scored per search, most votes first. */
const CANDIDATES = 8;

export interface SearchOptions {
  /** Votes an alignment needs before it is scored. */
  minVotes: number;
  /** The largest share of differing bits a match may have (0.5 is unrelated audio). */
  maxBitError: number;
  /** The least share of the window that must overlap the track. */
  minOverlap: number;
}

export const DEFAULT_SEARCH: SearchOptions = { minVotes: 3, maxBitError: 0.3, minOverlap: 0.6 };

export interface IndexTrack {
  id: number;
  fingerprint: Uint32Array;
}

export interface Match {
  /** The library track's id. */
  trackId: number;
  /** Where in the track the window's first item lies, in items (may be negative: the window starts before it). */
  offset: number;
  /** Differing bits over the window's overlap, 0..1. */
  bitError: number;
  /** 1 - bitError, rounded: what a play keeps. */
  score: number;
  votes: number;
}

export function popcount(value: number): number {
  let v = value - ((value >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

export class FingerprintIndex {
  /** Every track's items, one after the other. */
  private readonly items: Uint32Array;
  /** Track i's items are items[starts[i] .. starts[i + 1]). */
  private readonly starts: Uint32Array;
  private readonly ids: number[];
  /** Bucket k's places are postings[bucketStarts[k] .. bucketStarts[k + 1]). */
  private readonly bucketStarts: Uint32Array;
  private readonly postings: Uint32Array;

  constructor(tracks: readonly IndexTrack[]) {
    const total = tracks.reduce((sum, track) => sum + track.fingerprint.length, 0);
    this.items = new Uint32Array(total);
    this.starts = new Uint32Array(tracks.length + 1);
    this.ids = tracks.map((track) => track.id);
    let at = 0;
    tracks.forEach((track, i) => {
      this.starts[i] = at;
      this.items.set(track.fingerprint, at);
      at += track.fingerprint.length;
    });
    this.starts[tracks.length] = at;
    // A counting sort of the places by key: two passes, no per-key arrays.
    const buckets = 1 << KEY_BITS;
    this.bucketStarts = new Uint32Array(buckets + 1);
    for (let p = 0; p < total; p++) this.bucketStarts[((this.items[p] ?? 0) >>> KEY_SHIFT) + 1] += 1;
    for (let k = 0; k < buckets; k++) this.bucketStarts[k + 1] += this.bucketStarts[k];
    const fill = this.bucketStarts.slice(0, buckets);
    this.postings = new Uint32Array(total);
    for (let p = 0; p < total; p++) this.postings[fill[(this.items[p] ?? 0) >>> KEY_SHIFT]++] = p;
  }

  get size(): number {
    return this.ids.length;
  }

  /** Bytes held by the index's arrays. */
  get bytes(): number {
    return this.items.byteLength + this.starts.byteLength + this.bucketStarts.byteLength + this.postings.byteLength + this.ids.length * 8;
  }

  /** The best match of a window of items, or null when nothing passes the thresholds. */
  search(query: Uint32Array, options: SearchOptions = DEFAULT_SEARCH): Match | null {
    if (query.length === 0 || this.items.length === 0) return null;
    const votes = new Map<number, number>();
    for (let i = 0; i < query.length; i++) {
      const key = (query[i] ?? 0) >>> KEY_SHIFT;
      const from = this.bucketStarts[key] ?? 0;
      const to = this.bucketStarts[key + 1] ?? 0;
      if (to - from > MAX_BUCKET) continue;
      for (let b = from; b < to; b++) {
        // The place where the window's first item would lie; +1 keeps it unsigned.
        const aligned = (this.postings[b] ?? 0) - i + query.length;
        votes.set(aligned, (votes.get(aligned) ?? 0) + 1);
      }
    }
    let best: Match | null = null;
    for (const [aligned, count] of topVotes(votes, CANDIDATES, options.minVotes)) {
      const match = this.score(query, aligned - query.length, count, options);
      if (match && (!best || match.bitError < best.bitError)) best = match;
    }
    return best;
  }

  /** The window laid at global place `at`: scored over its overlap with the track under its middle. */
  private score(query: Uint32Array, at: number, votes: number, options: SearchOptions): Match | null {
    const track = this.trackAt(Math.max(at + (query.length >> 1), 0));
    if (track < 0) return null;
    const start = this.starts[track] ?? 0;
    const end = this.starts[track + 1] ?? 0;
    const from = Math.max(at, start);
    const to = Math.min(at + query.length, end);
    if (to - from < options.minOverlap * query.length) return null;
    let differing = 0;
    for (let p = from; p < to; p++) differing += popcount(((this.items[p] ?? 0) ^ (query[p - at] ?? 0)) >>> 0);
    const bitError = differing / (32 * (to - from));
    if (bitError > options.maxBitError) return null;
    return { trackId: this.ids[track] ?? -1, offset: at - start, bitError, score: Math.round((1 - bitError) * 1000) / 1000, votes };
  }

  /** The track holding global place p (binary search of the starts), -1 past the end. */
  private trackAt(p: number): number {
    let low = 0;
    let high = this.ids.length - 1;
    if (high < 0 || p >= (this.starts[this.ids.length] ?? 0)) return -1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.starts[mid] ?? 0) <= p) low = mid;
      else high = mid - 1;
    }
    return low;
  }
}

/** The `count` alignments with the most votes (neighbours ±1 counted in: an item may fall a frame early or late). */
function topVotes(votes: Map<number, number>, count: number, minVotes: number): [number, number][] {
  const found: [number, number][] = [];
  for (const [aligned, own] of votes) {
    if (own + 1 < minVotes) continue;
    const total = own + (votes.get(aligned - 1) ?? 0) + (votes.get(aligned + 1) ?? 0);
    if (total >= minVotes) found.push([aligned, total]);
  }
  found.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return found.slice(0, count);
}
