// Answers of outside services, kept in SQLite with a time to live (docs/enrichment.md).
// The contract and its expiry rules; the bodies are sqlite/lookup-cache.ts and postgres/lookup-cache.ts.

const FOUND_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const NOT_FOUND_TTL_MS = 24 * 60 * 60 * 1000;

/** A cached answer: the JSON text of what the service said, or "not found". */
export type CachedAnswer = { found: true; answer: string } | { found: false };
/** A cached answer as read back, with the time (ms since the epoch) it expires. */
export type StoredAnswer = CachedAnswer & { expiresAt: number };

export interface LookupCacheStore {
  /** The live (not expired) answer, or undefined when there is none. */
  get(service: string, key: string): Promise<StoredAnswer | undefined>;
  /** Stores an answer and returns when it expires. */
  put(service: string, key: string, answer: CachedAnswer): Promise<number>;
  /** Deletes expired rows; returns how many. */
  purgeExpired(): Promise<number>;
}

/** A stored row as an answer, for both backends: "found" with its JSON text, or "not found". */
export function storedAnswer(found: boolean, answer: string | null, expiresAt: number): StoredAnswer {
  return found && answer !== null ? { found: true, answer, expiresAt } : { found: false, expiresAt };
}

/** When an answer fetched at `at` expires. */
export function expiryOf(answer: CachedAnswer, at: number): number {
  return at + (answer.found ? FOUND_TTL_MS : NOT_FOUND_TTL_MS);
}
