import { coverUrlFor } from '../domain/image';
import type { ImageIntake, KnownImage } from '../domain/image-intake';
import type { TrackFields } from '../domain/track';
import { cachedPart, type EnrichmentPlan } from '../enrich/enricher';
import { answersFromCacheOnly } from '../enrich/lookups';
import { runEnrichers } from '../enrich/run-enrichers';
import type { Logger } from '../log';
import { fitRecord } from './fit-record';

// What svc already knows about a track before it is announced (docs/decisions.md "Complete
// frames"): the fields the lookup cache answers (enrichment run from the cache alone, asking no
// service) and the images the store holds for it (the same release's cover, the same artist's
// images). The first frame carries them; a transparent placeholder is left only where nothing is known.

/** The cache-only run's budget: cached answers come in a few ms; past this the title goes out without them. */
const KNOWN_LOOKUP_MS = 25;

/** Misses are the normal case here, not news: nothing is logged. */
const QUIET: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

export interface Known {
  /** Fields the lookup cache knows (credited in `enrichment_sources`), and `coverurl` when a cover is known. */
  fields: TrackFields;
  images: KnownImage[];
}

export interface KnownDeps {
  plan: EnrichmentPlan;
  images?: ImageIntake | undefined;
}

/** Never throws, never asks an outside service; {} and [] when nothing is known. */
export async function knownBeforeAnnounce(track: Readonly<TrackFields>, deps: KnownDeps): Promise<Known> {
  const plan = cachedPart(deps.plan);
  const fromCache =
    plan.length === 0
      ? { added: {}, sources: {}, images: [] }
      : await answersFromCacheOnly(() => runEnrichers(track, plan, { deadlineMs: KNOWN_LOOKUP_MS, logger: QUIET }));
  const fields: TrackFields = { ...fromCache.added };
  if (Object.keys(fromCache.sources).length > 0) fields.enrichment_sources = { ...fromCache.sources };
  const images = (await deps.images?.knownImages({ ...track, ...fields }, fromCache.images)) ?? [];
  const cover = images.find((image) => image.category === 'cover');
  if (cover) fields.coverurl = coverUrlFor(cover.key);
  return { fields, images };
}

/** The submitted fields with what is known added where they are empty, within the record's size bound (else without). */
export function withKnown(submitted: Readonly<TrackFields>, known: Known, maxRecordBytes: number): TrackFields {
  const merged: TrackFields = { ...submitted };
  for (const [key, value] of Object.entries(known.fields)) if (merged[key] === undefined) merged[key] = value;
  try {
    return fitRecord(merged, maxRecordBytes, [], new Set(['coverurl']));
  } catch {
    return { ...submitted };
  }
}
