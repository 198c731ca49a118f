import { FingerprintIndex, popcount } from '../../../src/recognition/fingerprint-index';
import { TitleTracker } from '../../../src/recognition/title-tracker';

// The matcher as pure logic (docs/recognition.md "Matching"), on synthetic items: a seeded
// generator stands for Chromaprint's output, bit flips for a noisy, re-encoded copy.

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

function track(seed: number, length: number): Uint32Array {
  const next = random(seed);
  return Uint32Array.from({ length }, () => next());
}

/** Flips each bit with probability `share` (the low bits more often, as Chromaprint's do). */
function noisy(items: Uint32Array, share: number, seed: number): Uint32Array {
  const next = random(seed);
  return items.map((item) => {
    let flipped = item;
    for (let bit = 0; bit < 32; bit++) if (next() / 2 ** 32 < share * (bit < 12 ? 1.6 : 0.6)) flipped ^= 1 << bit;
    return flipped >>> 0;
  });
}

const library = Array.from({ length: 40 }, (_, i) => ({ id: 100 + i, fingerprint: track(i + 1, 1500 + i * 10) }));
const index = new FingerprintIndex(library);

describe('popcount', () => {
  test('counts the set bits of 32-bit values', () => {
    expect([0, 1, 0xff, 0xffffffff, 0x80000001].map((value) => popcount(value >>> 0))).toEqual([0, 1, 8, 32, 2]);
  });
});

describe('FingerprintIndex', () => {
  test('an exact window finds its track and offset, scored 1', () => {
    const source = library[17].fingerprint;
    const match = index.search(source.subarray(400, 464));
    expect(match).toMatchObject({ trackId: 117, offset: 400, bitError: 0, score: 1 });
  });

  test('a noisy copy (10 % of the bits flipped) still finds it', () => {
    const window = noisy(library[5].fingerprint.subarray(900, 964), 0.1, 7);
    const match = index.search(window);
    expect(match?.trackId).toBe(105);
    expect(match?.offset).toBe(900);
    expect(match!.bitError).toBeGreaterThan(0.05);
  });

  test('a window that starts before the track begins matches at a negative offset', () => {
    const source = library[3].fingerprint;
    const window = new Uint32Array(64);
    window.set(track(999, 10), 0);
    window.set(source.subarray(0, 54), 10);
    expect(index.search(window)).toMatchObject({ trackId: 103, offset: -10 });
  });

  test('audio that is not in the library gets no match', () => {
    for (let seed = 5000; seed < 5020; seed++) expect(index.search(track(seed, 64))).toBeNull();
  });

  test('heavy damage (40 % of the bits) is no match rather than a guess', () => {
    expect(index.search(noisy(library[9].fingerprint.subarray(100, 164), 0.4, 3))).toBeNull();
  });

  test('an empty index or window matches nothing', () => {
    expect(new FingerprintIndex([]).search(track(1, 64))).toBeNull();
    expect(index.search(new Uint32Array(0))).toBeNull();
  });

  test('a key shared by too many places (silence) does not vote, the rest still find the track', () => {
    const silence = new Uint32Array(5000).fill(0x12345678);
    const withSilence = new FingerprintIndex([{ id: 1, fingerprint: silence }, ...library]);
    expect(withSilence.search(silence.subarray(0, 64))).toBeNull();
    expect(withSilence.search(library[2].fingerprint.subarray(50, 114))?.trackId).toBe(102);
  });

  test('reports the bytes it holds', () => {
    const items = library.reduce((sum, entry) => sum + entry.fingerprint.length, 0);
    expect(index.bytes).toBeGreaterThanOrEqual(items * 8 + (1 << 20) * 4);
    expect(index.size).toBe(40);
  });
});

describe('TitleTracker', () => {
  const match = (trackId: number, offset: number) => ({ trackId, offset, bitError: 0.1, score: 0.9, votes: 9 });

  test('a title after two agreeing windows, not after one', () => {
    const tracker = new TitleTracker();
    expect(tracker.push({ position: 0, match: match(1, 100) })).toBeNull();
    expect(tracker.push({ position: 16, match: match(1, 116) })).toEqual({ type: 'title', match: match(1, 116), rate: 1 });
    expect(tracker.current()?.trackId).toBe(1);
    expect(tracker.push({ position: 32, match: match(1, 132) })).toBeNull();
  });

  test('two windows of one track at offsets that do not agree are no title', () => {
    const tracker = new TitleTracker();
    tracker.push({ position: 0, match: match(1, 100) });
    expect(tracker.push({ position: 16, match: match(1, 400) })).toBeNull();
    expect(tracker.current()).toBeNull();
  });

  test('two different tracks in a row are no title', () => {
    const tracker = new TitleTracker();
    tracker.push({ position: 0, match: match(1, 100) });
    expect(tracker.push({ position: 16, match: match(2, 116) })).toBeNull();
  });

  test('cleared after clearAfter windows without the title; a miss in between does not clear', () => {
    const tracker = new TitleTracker({ clearAfter: 3, slackItems: 6, slackShare: 0.1 });
    tracker.push({ position: 0, match: match(1, 0) });
    tracker.push({ position: 16, match: match(1, 16) });
    expect(tracker.push({ position: 32, match: null })).toBeNull();
    expect(tracker.push({ position: 48, match: match(1, 48) })).toBeNull();
    expect(tracker.push({ position: 64, match: null })).toBeNull();
    expect(tracker.push({ position: 80, match: null })).toBeNull();
    expect(tracker.push({ position: 96, match: null })).toEqual({ type: 'cleared', trackId: 1 });
    expect(tracker.current()).toBeNull();
  });

  test('the next track takes over after its own two agreeing windows', () => {
    const tracker = new TitleTracker({ clearAfter: 4, slackItems: 6, slackShare: 0.1 });
    tracker.push({ position: 0, match: match(1, 0) });
    tracker.push({ position: 16, match: match(1, 16) });
    expect(tracker.push({ position: 32, match: match(2, 5) })).toBeNull();
    expect(tracker.push({ position: 48, match: match(2, 21) })).toEqual({ type: 'title', match: match(2, 21), rate: 1 });
    expect(tracker.current()?.trackId).toBe(2);
  });

  test('a faster turntable: offsets move by the rate found', () => {
    const tracker = new TitleTracker();
    tracker.push({ position: 0, match: match(1, 0), rate: 1.08 });
    expect(tracker.push({ position: 160, match: match(1, 173), rate: 1.08 })?.type).toBe('title');
  });
});
