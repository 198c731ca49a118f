import type { ImageCandidate, TrackFields } from '../domain/track';

// The one small interface every outside service sits behind.

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
  /** Looks the track up. Returns null when it found nothing; throws on failure. */
  enrich(track: Readonly<TrackFields>, context: EnrichmentContext): Promise<Enrichment | null>;
}

/**
 * Stages run one after another, each seeing what the earlier ones filled in;
 * the enrichers of one stage run in parallel (e.g. recognition, then search, then cover,
 * then the artist providers together).
 */
export type EnrichmentPlan = readonly (readonly Enricher[])[];
