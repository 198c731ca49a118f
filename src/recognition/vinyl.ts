import type { Match } from './fingerprint-index';

// Vinyl (docs/recognition.md "Vinyl"): a turntable off pitch plays the record faster or slower,
// pitch and tempo together, and Chromaprint's items are not pitch-invariant, so a window of such
// a stream matches nothing as it is. On a miss, the last seconds of the stream's PCM are
// resampled at a few candidate rates (a rate of 1.08 undoes a deck 8 % fast), the copies are laid
// one after the other and fingerprinted by one fpcalc run, and each copy's items are searched.
// The rates tried per window are capped; a cursor walks the rest over the following windows, and
// the rate last found is tried first. Pure but for the fingerprinter it is handed.

export interface VinylOptions {
  /** The largest pitch offset searched, in percent (8: rates 0.92 to 1.08). */
  maxPercent: number;
  /** The step between rates, in percent. */
  stepPercent: number;
  /** Rates fingerprinted per window at most (the CPU bound: one fpcalc run of this many copies). */
  ratesPerWindow: number;
  /** Windows in a row without a match after which a stream not marked vinyl is searched at other rates too (0: never). */
  afterMissedWindows: number;
}

export const DEFAULT_VINYL: VinylOptions = { maxPercent: 8, stepPercent: 0.5, ratesPerWindow: 8, afterMissedWindows: 15 };

/** Chromaprint's hop at 11,025 Hz: item i starts at sample i * HOP (frames of 4096, overlapping by two thirds). */
export const HOP_SAMPLES = 1365;
/** Frames read before an item comes out: items = frames - 19 (fpcalc 1.5), item i needs frames i..i+19. */
export const ITEM_SPAN_FRAMES = 19;
const FRAME_SAMPLES = 4096;

/** The rates to try besides 1, nearest first: 1.005, 0.995, 1.01, 0.99, ... */
export function vinylRates(options: Pick<VinylOptions, 'maxPercent' | 'stepPercent'>): number[] {
  const rates: number[] = [];
  const steps = Math.floor(options.maxPercent / options.stepPercent + 1e-9);
  for (let step = 1; step <= steps; step++) {
    const offset = (step * options.stepPercent) / 100;
    rates.push(round(1 + offset), round(1 - offset));
  }
  return rates;
}

function round(rate: number): number {
  return Math.round(rate * 10_000) / 10_000;
}

/**
 * The PCM as it sounds with the deck at rate 1: a window played `rate` times too fast holds
 * `rate` times as much of the record, so it is stretched to length × rate (linear interpolation;
 * Chromaprint listens below 3.5 kHz, far under the 5.5 kHz this leaves).
 */
export function resample(pcm: Int16Array, rate: number): Int16Array {
  const length = Math.max(0, Math.floor(pcm.length * rate));
  const out = new Int16Array(length);
  const last = pcm.length - 1;
  for (let j = 0; j < length; j++) {
    const at = j / rate;
    const i = Math.floor(at);
    const next = i < last ? i + 1 : last;
    const a = pcm[i] ?? 0;
    const b = pcm[next] ?? 0;
    out[j] = Math.round(a + (b - a) * (at - i));
  }
  return out;
}

/** Which rates each window tries: the one last found first, then the next ones of a cursor that walks all of them. */
export class RateCursor {
  private at = 0;
  private found: number | null = null;

  constructor(private readonly rates: readonly number[]) {}

  /** The rates for this window, at most `count`. */
  next(count: number): number[] {
    const picked: number[] = [];
    if (this.found !== null) picked.push(this.found);
    for (let tried = 0; picked.length < count && tried < this.rates.length; tried++) {
      const rate = this.rates[this.at] ?? 1;
      this.at = (this.at + 1) % this.rates.length;
      if (!picked.includes(rate)) picked.push(rate);
    }
    return picked;
  }

  /** A match at this rate (null: none): tried first next time. */
  settle(rate: number | null): void {
    this.found = rate;
  }
}

/**
 * Copies laid end to end, each starting on a hop (so its items fall where a fingerprint of it
 * alone would put them), and for each the range of the joint fingerprint's items that lie
 * wholly inside it.
 */
export function layCopies(copies: readonly Int16Array[]): { pcm: Int16Array; ranges: [number, number][] } {
  const padded = copies.map((copy) => Math.ceil(copy.length / HOP_SAMPLES) * HOP_SAMPLES);
  const pcm = new Int16Array(padded.reduce((sum, length) => sum + length, 0));
  const ranges: [number, number][] = [];
  let at = 0;
  copies.forEach((copy, i) => {
    pcm.set(copy, at);
    const first = at / HOP_SAMPLES;
    // The last item whose frames (up to its own + 19) all end inside the copy.
    const last = Math.floor((at + copy.length - FRAME_SAMPLES) / HOP_SAMPLES) - ITEM_SPAN_FRAMES;
    ranges.push([first, Math.max(first, last + 1)]);
    at += padded[i] ?? copy.length;
  });
  return { pcm, ranges };
}

export interface RateMatch {
  match: Match;
  rate: number;
}

/**
 * The best match among resampled copies of the PCM: one fingerprint run for all of them,
 * each copy's items searched apart. `fingerprint` runs fpcalc (src/recognition/audio-tools.ts);
 * `search` is the index's. A failing fingerprinter is a miss.
 */
export async function searchRates(
  pcm: Int16Array,
  rates: readonly number[],
  fingerprint: (pcm: Buffer) => Promise<Uint32Array>,
  search: (items: Uint32Array) => Match | null,
): Promise<RateMatch | null> {
  if (rates.length === 0 || pcm.length === 0) return null;
  const { pcm: joint, ranges } = layCopies(rates.map((rate) => resample(pcm, rate)));
  let items: Uint32Array;
  try {
    items = await fingerprint(Buffer.from(joint.buffer, joint.byteOffset, joint.byteLength));
  } catch {
    return null;
  }
  let best: RateMatch | null = null;
  ranges.forEach(([from, to], i) => {
    if (to > items.length || to - from <= 0) return;
    const match = search(items.subarray(from, to));
    if (match && (!best || match.bitError < best.match.bitError)) best = { match, rate: rates[i] ?? 1 };
  });
  return best;
}

/** The last `capacity` samples of a stream's PCM, and the stream position of the first of them in items. */
export class PcmRing {
  private readonly samples: Int16Array;
  private filled = 0;
  private total = 0;
  /** An odd byte left over from a chunk (s16le arrives in pieces of any length). */
  private carry: number | null = null;

  constructor(private readonly capacity: number) {
    this.samples = new Int16Array(capacity);
  }

  push(bytes: Buffer): void {
    let data = bytes;
    if (this.carry !== null) {
      data = Buffer.concat([Buffer.from([this.carry]), bytes]);
      this.carry = null;
    }
    if (data.length % 2 === 1) {
      this.carry = data[data.length - 1] ?? 0;
      data = data.subarray(0, data.length - 1);
    }
    const count = data.length / 2;
    this.total += count;
    const skip = Math.max(0, count - this.capacity);
    const take = count - skip;
    const keep = Math.min(this.filled, this.capacity - take);
    this.samples.copyWithin(0, this.filled - keep, this.filled);
    for (let i = 0; i < take; i++) this.samples[keep + i] = data.readInt16LE((skip + i) * 2);
    this.filled = keep + take;
  }

  /** The samples held (a copy) and where the first lies in the stream, in items. */
  window(): { pcm: Int16Array; position: number } {
    return { pcm: this.samples.slice(0, this.filled), position: (this.total - this.filled) / HOP_SAMPLES };
  }
}
