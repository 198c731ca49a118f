import { isHttpUrl } from '../domain/http-url';
import type { ImageCandidate, ImageCategory, TrackFields } from '../domain/track';
import { errorMessage } from '../errors';
import type { Logger } from '../log';

// The one small interface every outside service sits behind, and the helpers that build an
// enricher's answer.

export interface EnrichmentContext {
  /** Aborted when the enrichment deadline passes or the submission is abandoned. */
  signal: AbortSignal;
}

export interface Enrichment {
  /** Fields the provider found; only the empty ones of the track are filled with them. */
  fields?: TrackFields;
  /** Images to fetch into the image store (they may arrive after the HTTP response). */
  images?: ImageCandidate[];
  /**
   * Field -> provider, for fields this enricher got from another service than the one it is
   * named after (e.g. the Wikidata enricher's biography comes from Wikipedia).
   */
  sources?: Readonly<Record<string, string>>;
}

export interface Enricher {
  readonly name: string;
  /**
   * Asks every service through the lookup cache (lookups.ts), so that answersFromCacheOnly can run
   * it before a track is announced without asking anyone. Unset: never run that way.
   */
  readonly answersFromCache?: boolean;
  /** Looks the track up. Returns null when it found nothing; throws on failure. */
  enrich(track: Readonly<TrackFields>, context: EnrichmentContext): Promise<Enrichment | null>;
}

/**
 * Stages run one after another, each seeing what the earlier ones filled in;
 * the enrichers of one stage run in parallel (e.g. recognition, then search, then cover,
 * then the artist providers together).
 */
export type EnrichmentPlan = readonly (readonly Enricher[])[];

/** The part of a plan that can run from the lookup cache alone (answersFromCache). */
export function cachedPart(plan: EnrichmentPlan): EnrichmentPlan {
  return plan.map((stage) => stage.filter((enricher) => enricher.answersFromCache === true)).filter((stage) => stage.length > 0);
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

/** The image a provider names, as a candidate; none when the URL is missing or not http(s). */
export function image(category: ImageCategory, url: string | undefined, source: string): ImageCandidate[] {
  return url !== undefined && isHttpUrl(url) ? [{ category, url, source }] : [];
}

/** Logs a failed secondary lookup that the provider survives; a cancelled one, or one not cached in a cache-only run (lookups.ts), is not news. */
export function logDegraded(logger: Logger, signal: AbortSignal, what: string, error: unknown): void {
  if (error instanceof Error && error.name === 'NotCachedError') return;
  if (!signal.aborted) logger.warn(`enrichment: ${what} failed, continuing without it: ${errorMessage(error)}`);
}
