// What the AcoustID fake (test/fakes/recognition-services.ts) needs of Chromaprint and of
// AcoustID's matcher, written here from the facts of their sources (no code of theirs):
//
// - The compressed fingerprint svc POSTs (fpcalc without -raw), as chromaprint decodes it:
//   https://github.com/acoustid/chromaprint src/fingerprint_decompressor.cpp (and the
//   compressor, src/fingerprint_compressor.cpp; the bit packing, src/utils/unpack_int3_array.h
//   and src/utils/unpack_int5_array.h; the alphabet, src/utils/base64.h). Base64 with `-` and
//   `_`, no padding. Byte 0 is the algorithm, bytes 1-3 the item count (big-endian). Then, packed
//   least significant bit first, one 3-bit value per set bit of each item XOR the item before
//   (the first item as it is): the distance from the previous set bit, 0 ending an item, 7
//   meaning "7 plus the next 5-bit exception value", which follow the 3-bit values from the next
//   whole byte. Decoding fails when the input is under 4 bytes, when the 3-bit values end before
//   the item count's zeros, or when the exception values are cut short.
// - AcoustID's own refusals on top (acoustid-server acoustid/data/fingerprint.py
//   decode_fingerprint): algorithm other than 1 (FINGERPRINT_VERSION) or no items is invalid.
// - The score, as https://github.com/acoustid/pg_acoustid acoustid_compare.c
//   (match_fingerprints2, the acoustid_compare2 the lookup ranks by) computes it: the offset on
//   which most items' top 14 bits agree (within max_offset items), then over the overlap
//   score = (overlap / shorter length) * (1 - 2 * bit errors / bits compared), 0 when the best
//   offset's votes are under 2 % of the distinct 14-bit keys, and lowered (score^(8 - 7 *
//   diversity)) for a fingerprint of few distinct items.

export interface DecodedFingerprint {
  algorithm: number;
  items: Uint32Array;
}

/** The n-th `width`-bit value of `bytes` from byte `start`, least significant bit first. */
function packedValue(bytes: Uint8Array, start: number, width: number, n: number): number {
  let value = 0;
  for (let bit = 0; bit < width; bit += 1) {
    const position = n * width + bit;
    const byte = bytes[start + (position >> 3)] ?? 0;
    value |= ((byte >> (position & 7)) & 1) << bit;
  }
  return value;
}

/** chromaprint's decompression of a base64 compressed fingerprint; null where it fails. */
export function decompressFingerprint(text: string): DecodedFingerprint | null {
  const bytes = new Uint8Array(Buffer.from(text, 'base64url'));
  if (bytes.length < 4) return null;
  const algorithm = bytes[0] ?? 0;
  const size = ((bytes[1] ?? 0) << 16) | ((bytes[2] ?? 0) << 8) | (bytes[3] ?? 0);
  // The 3-bit values: as many as the bytes hold, read until the size-th zero.
  const available = Math.floor(((bytes.length - 4) * 8) / 3);
  const normal: number[] = [];
  let zeros = 0;
  let exceptions = 0;
  for (let n = 0; n < available && zeros < size; n += 1) {
    const value = packedValue(bytes, 4, 3, n);
    normal.push(value);
    if (value === 0) zeros += 1;
    else if (value === 7) exceptions += 1;
  }
  if (zeros !== size) return null;
  const exceptionStart = 4 + ((normal.length * 3 + 7) >> 3);
  if (bytes.length < exceptionStart + ((exceptions * 5 + 7) >> 3)) return null;
  let exception = 0;
  const items = new Uint32Array(size);
  let item = 0;
  let value = 0;
  let lastBit = 0;
  for (const raw of normal) {
    const step = raw === 7 ? raw + packedValue(bytes, exceptionStart, 5, exception++) : raw;
    if (step === 0) {
      items[item++] = value >>> 0;
      lastBit = 0;
    } else {
      lastBit += step;
      // A shift past bit 31 wraps as the machine's 32-bit shift does (no valid input has one).
      value ^= 1 << (lastBit - 1);
    }
  }
  return { algorithm, items };
}

/** What AcoustID's lookup accepts: chromaprint decodes it, algorithm 1, at least one item. */
export function acoustIdFingerprint(text: string): Uint32Array | null {
  const decoded = decompressFingerprint(text);
  return decoded && decoded.algorithm === 1 && decoded.items.length > 0 ? decoded.items : null;
}

function bitCount(x: number): number {
  let v = x >>> 0;
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

const MATCH_BITS = 14;
const MATCH_KEYS = 1 << MATCH_BITS;
const key = (item: number) => item >>> (32 - MATCH_BITS);

function distinctKeys(items: Uint32Array): number {
  const seen = new Uint8Array(MATCH_KEYS);
  let count = 0;
  for (const item of items) {
    if (seen[key(item)] === 0) {
      seen[key(item)] = 1;
      count += 1;
    }
  }
  return count;
}

/** acoustid_compare2's score (0..1) of a stored fingerprint `a` against the query `b`. */
export function compareFingerprints(a: Uint32Array, b: Uint32Array, maxOffset: number): number {
  // Where each 14-bit key was last seen (0: never, as position 0 also reads there).
  const aAt = new Int32Array(MATCH_KEYS);
  const bAt = new Int32Array(MATCH_KEYS);
  a.forEach((item, i) => (aAt[key(item)] = i));
  b.forEach((item, i) => (bAt[key(item)] = i));
  const votes = new Map<number, number>();
  let top = 0;
  let topOffset = 0;
  for (let k = 0; k < MATCH_KEYS - 1; k += 1) {
    const ai = aAt[k] ?? 0;
    const bi = bAt[k] ?? 0;
    if (ai === 0 || bi === 0) continue;
    const offset = ai - bi;
    if (maxOffset !== 0 && Math.abs(offset) > maxOffset) continue;
    const count = (votes.get(offset) ?? 0) + 1;
    votes.set(offset, count);
    if (count > top) {
      top = count;
      topOffset = offset;
    }
  }
  const minSize = Math.min(a.length, b.length) & ~1;
  const aa = topOffset > 0 ? a.subarray(topOffset) : a;
  const bb = topOffset < 0 ? b.subarray(-topOffset) : b;
  const pairs = Math.floor(Math.min(aa.length, bb.length) / 2);
  if (pairs === 0 || minSize === 0) return 0;
  const aDistinct = distinctKeys(aa);
  const bDistinct = distinctKeys(bb);
  const diversity = Math.min(Math.min(1, (aDistinct + 10) / aa.length + 0.5), Math.min(1, (bDistinct + 10) / bb.length + 0.5));
  if (top < Math.max(aDistinct, bDistinct) * 0.02) return 0;
  let errors = 0;
  for (let i = 0; i < pairs * 2; i += 1) errors += bitCount((aa[i] ?? 0) ^ (bb[i] ?? 0));
  const score = Math.max(0, ((pairs * 2) / minSize) * (1 - (2 * errors) / (64 * pairs)));
  return diversity < 1 ? score ** (8 - 7 * diversity) : score;
}
