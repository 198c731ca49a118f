import type { ServiceClient } from './http';
import type { Lookups } from './lookups';
import type { Logger } from '../log';

// What every provider module is built from, and the one way it asks its service a question.

export interface ServiceDeps {
  /** The service's HTTP client (User-Agent, timeout, rate limit). */
  client: ServiceClient;
  /** Cache and coalescing of lookups. */
  lookups: Lookups;
  logger: Logger;
}

/**
 * A cached, coalesced GET of a JSON document; a 404 means "not found". `key` names the question
 * and must never hold an API key (it is stored in the cache).
 */
export function lookupJson<T>(
  deps: ServiceDeps,
  question: { service: string; key: string; url: string; decode: (raw: unknown) => T | null },
  signal: AbortSignal,
): Promise<T | null> {
  const { service, key, url, decode } = question;
  const fetch = async (flightSignal: AbortSignal) => {
    const answer = await deps.client.json(url, { signal: flightSignal });
    return answer.found ? answer.body : undefined;
  };
  return deps.lookups.get({ service, key, decode, fetch }, signal);
}
