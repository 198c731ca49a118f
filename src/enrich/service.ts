import { isHttpUrl } from '../domain/http-url';
import { fieldTexts, type ImageCandidate, type ImageCategory, type TrackFields } from '../domain/track';
import { errorMessage } from '../errors';
import type { Logger } from '../log';
import { asMbid } from './json-read';
import type { ServiceClient } from './http';
import type { Lookups } from './lookups';

// What every provider module is built from, and the few helpers they share.

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

/**
 * The first MusicBrainz id in a field that holds one id or a list of them (What's Now Playing
 * sends `musicbrainzartistid` as a list).
 */
export function fieldMbid(track: Readonly<TrackFields>, key: string): string | undefined {
  return fieldTexts(track, key)
    .map(asMbid)
    .find((id) => id !== undefined);
}

/** Logs a failed secondary lookup that the provider survives; a cancelled one is not news. */
export function logDegraded(logger: Logger, signal: AbortSignal, what: string, error: unknown): void {
  if (!signal.aborted) logger.warn(`enrichment: ${what} failed, continuing without it: ${errorMessage(error)}`);
}

export function image(category: ImageCategory, url: string | undefined, source: string): ImageCandidate[] {
  return url !== undefined && isHttpUrl(url) ? [{ category, url, source }] : [];
}

/** Drops undefined values so only what was found reaches the merge. */
export function foundFields(fields: Record<string, TrackFields[string] | undefined>): TrackFields {
  const result: TrackFields = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) continue;
    result[key] = value;
  }
  return result;
}
