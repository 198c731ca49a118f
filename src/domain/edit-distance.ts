// How far apart two names are, for fuzzy matching of titles (enrich/match.ts) and for "did you
// mean" on a mistyped config key (config/load.ts). Pure.

/** The Levenshtein distance: insertions, deletions and substitutions, by code point. */
export function editDistance(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  let previous = Array.from({ length: y.length + 1 }, (_, index) => index);
  for (let i = 1; i <= x.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= y.length; j += 1) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[y.length] ?? 0;
}

/**
 * The candidate a mistyped name most likely meant: the nearest, case aside, within a third of its
 * length (at least 2 edits, so that a swap of two letters counts, at most 3); undefined when none
 * is that near.
 */
export function closestName(typed: string, candidates: Iterable<string>): string | undefined {
  const wanted = typed.toLowerCase();
  const allowed = Math.min(3, Math.max(2, Math.floor(wanted.length / 3)));
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(wanted, name.toLowerCase());
    if (distance <= allowed && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** "an array", "an mqtt output", "a number": the article as the word is said. */
export function withArticle(noun: string): string {
  // Letters said one by one that start with a vowel sound: "an MQTT", "an HTTP", "an SSE".
  const vowelSound = /^[aeiou]/i.test(noun) || /^(mqtt|http|html|sse|svg|ssl|xml)/i.test(noun);
  return `${vowelSound ? 'an' : 'a'} ${noun}`;
}
