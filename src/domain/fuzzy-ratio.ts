// The weighted similarity What's Now Playing scores song requests with (its trackrequests.py calls
// rapidfuzz's `fuzz.WRatio` with no processor), restated from the algorithm rapidfuzz documents
// (fuzz.ratio, partial_ratio, token_sort/token_set/token_ratio, partial_token_ratio, WRatio):
// - ratio: the normalised Indel similarity, 100 * 2 * LCS / (len1 + len2);
// - partial_ratio: the best ratio of the shorter string against every window of the longer one of
//   its length, and the shorter windows at either end (both ways round when the lengths are equal);
// - token_ratio: the better of the sorted words' ratio and the word-set comparison (100 when one
//   set of words holds the other);
// - WRatio: ratio, with token_ratio * 0.95 when the lengths differ by less than 1.5 times; else
//   partial_ratio * 0.9 (0.6 past 8 times) and partial_token_ratio * 0.95 * that scale.
// Strings are compared by code point. Pure.

const UNBASE_SCALE = 0.95;

/** 0-100: the normalised Indel similarity of two code-point sequences. */
export function ratio(a: string, b: string): number {
  return indelSimilarity([...a], [...b]);
}

function indelSimilarity(left: readonly string[], right: readonly string[]): number {
  const total = left.length + right.length;
  if (total === 0) return 100;
  return (100 * 2 * longestCommonSubsequence(left, right)) / total;
}

function longestCommonSubsequence(left: readonly string[], right: readonly string[]): number {
  let previous = new Array<number>(right.length + 1).fill(0);
  for (const char of left) {
    const row = [0];
    for (let j = 1; j <= right.length; j += 1) row.push(char === right[j - 1] ? (previous[j - 1] ?? 0) + 1 : Math.max(previous[j] ?? 0, row[j - 1] ?? 0));
    previous = row;
  }
  return previous[right.length] ?? 0;
}

/** 0-100: the shorter string against its best-matching window of the longer one. */
export function partialRatio(a: string, b: string): number {
  const left = [...a];
  const right = [...b];
  if (left.length === 0 && right.length === 0) return 100;
  const [shorter, longer] = left.length <= right.length ? [left, right] : [right, left];
  let best = windowsBest(shorter, longer);
  if (best !== 100 && left.length === right.length) best = Math.max(best, windowsBest(longer, shorter));
  return best;
}

function windowsBest(needle: readonly string[], hay: readonly string[]): number {
  const n = needle.length;
  const windows: (readonly string[])[] = [];
  for (let i = 1; i < n; i += 1) windows.push(hay.slice(0, i));
  for (let i = 0; i < hay.length - n; i += 1) windows.push(hay.slice(i, i + n));
  for (let i = Math.max(0, hay.length - n); i < hay.length; i += 1) windows.push(hay.slice(i));
  let best = 0;
  for (const window of windows) {
    best = Math.max(best, indelSimilarity(needle, window));
    if (best === 100) break;
  }
  return best;
}

function words(text: string): string[] {
  return text.split(/\s+/u).filter((word) => word !== '');
}

function sortedJoin(list: Iterable<string>): string {
  return [...list].sort(byCodePoint).join(' ');
}

/** Python's sort order for strings: by code point (localeCompare would not be). */
function byCodePoint(a: string, b: string): number {
  const left = [...a].map((char) => char.codePointAt(0) ?? 0);
  const right = [...b].map((char) => char.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(left.length, right.length); i += 1) if (left[i] !== right[i]) return (left[i] ?? 0) - (right[i] ?? 0);
  return left.length - right.length;
}

export function tokenSortRatio(a: string, b: string): number {
  return ratio(sortedJoin(words(a)), sortedJoin(words(b)));
}

export function tokenSetRatio(a: string, b: string): number {
  const setA = new Set(words(a));
  const setB = new Set(words(b));
  if (setA.size === 0 || setB.size === 0) return 0;
  const common = [...setA].filter((word) => setB.has(word));
  const onlyA = [...setA].filter((word) => !setB.has(word));
  const onlyB = [...setB].filter((word) => !setA.has(word));
  if (common.length > 0 && (onlyA.length === 0 || onlyB.length === 0)) return 100;
  const diffA = sortedJoin(onlyA);
  const diffB = sortedJoin(onlyB);
  const abLength = [...diffA].length;
  const baLength = [...diffB].length;
  // rapidfuzz joins the common words in set order; only the joined length counts here.
  const commonLength = [...common.join(' ')].length;
  const separator = commonLength === 0 ? 0 : 1;
  const sectAb = commonLength + separator + abLength;
  const sectBa = commonLength + separator + baLength;
  const distance = abLength + baLength - 2 * longestCommonSubsequence([...diffA], [...diffB]);
  const normalised = (dist: number, sum: number) => (sum === 0 ? 100 : 100 - (100 * dist) / sum);
  const result = normalised(distance, sectAb + sectBa);
  if (commonLength === 0) return result;
  return Math.max(result, normalised(separator + abLength, commonLength + sectAb), normalised(separator + baLength, commonLength + sectBa));
}

function tokenRatio(a: string, b: string): number {
  return Math.max(tokenSetRatio(a, b), tokenSortRatio(a, b));
}

function partialTokenRatio(a: string, b: string): number {
  const listA = words(a);
  const listB = words(b);
  const setA = new Set(listA);
  const setB = new Set(listB);
  if ([...setA].some((word) => setB.has(word))) return 100;
  const result = partialRatio(sortedJoin(listA), sortedJoin(listB));
  if (listA.length === setA.size && listB.length === setB.size) return result;
  return Math.max(result, partialRatio(sortedJoin(setA), sortedJoin(setB)));
}

/** 0-100: rapidfuzz's WRatio, the weighted best of the ratios above. 0 when either string is empty. */
export function weightedRatio(a: string, b: string): number {
  const lengthA = [...a].length;
  const lengthB = [...b].length;
  if (lengthA === 0 || lengthB === 0) return 0;
  const lengthRatio = lengthA > lengthB ? lengthA / lengthB : lengthB / lengthA;
  const whole = ratio(a, b);
  if (lengthRatio < 1.5) return Math.max(whole, tokenRatio(a, b) * UNBASE_SCALE);
  const partialScale = lengthRatio < 8 ? 0.9 : 0.6;
  const partial = Math.max(whole, partialRatio(a, b) * partialScale);
  return Math.max(partial, partialTokenRatio(a, b) * UNBASE_SCALE * partialScale);
}
