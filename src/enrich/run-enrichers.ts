import { setMaxListeners } from 'node:events';
import { deadlineSignal, sleep } from '../signals';
import type { ImageCandidate, TrackFields } from '../domain/track';
import { errorMessage } from '../errors';
import type { Logger } from '../log';
import { fillEmptyFields, isEmpty, type Merged } from '../domain/fill-empty-fields';
import type { Enrichment, EnrichmentPlan } from './enricher';

/** How long providers may take to return partial results once the deadline has passed. */
const ABORT_GRACE_MS = 25;

export interface EnrichmentOutcome {
  /** Only what enrichment added: fields the track had empty, each from the first provider in plan order. */
  added: TrackFields;
  /** Field name -> provider that supplied it, for every field of `added`. */
  sources: Record<string, string>;
  images: ImageCandidate[];
  /** True when the deadline cut enrichment short; whatever arrived in time is kept. */
  timedOut: boolean;
}

export interface RunOptions {
  deadlineMs: number;
  /** Aborts everything, e.g. when the whole submission timed out. */
  signal?: AbortSignal;
  logger: Logger;
  /** Called after each stage that added something, with everything added so far (a track fills in as it goes). */
  onProgress?: (added: Readonly<TrackFields>, sources: Readonly<Record<string, string>>) => void;
}

/**
 * Runs the plan stage by stage under one shared deadline. Never throws: a failing provider
 * is logged and contributes nothing, a slow one is abandoned at the deadline.
 */
export async function runEnrichers(track: Readonly<TrackFields>, plan: EnrichmentPlan, options: RunOptions): Promise<EnrichmentOutcome> {
  let added: Merged = { fields: {}, sources: {} };
  const images: ImageCandidate[] = [];
  if (plan.every((stage) => stage.length === 0)) return { added: {}, sources: {}, images, timedOut: false };

  // Aborted once the run is over, so that work still listening (a queue wait) lets go.
  const finished = new AbortController();
  const deadline = deadlineSignal(
    options.deadlineMs,
    options.signal ? [finished.signal, options.signal] : [finished.signal],
    () => new Error('enrichment deadline reached'),
  );
  const signal = deadline.signal;
  // Every lookup, queue wait and request of the submission listens to this one signal.
  setMaxListeners(0, signal);
  const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

  try {
    for (const stage of plan) {
      if (signal.aborted) break;
      const settled = new Array<Enrichment | null | undefined>(stage.length);
      // Each stage sees the track plus what earlier stages found (e.g. MusicBrainz's release id for the cover).
      const snapshot: TrackFields = { ...track, ...added.fields };
      const runs = stage.map(async (enricher, index) => {
        try {
          settled[index] = await enricher.enrich(snapshot, { signal });
        } catch (error) {
          if (!signal.aborted) options.logger.warn(`enrichment: ${enricher.name} failed: ${errorMessage(error)}`);
          settled[index] = null;
        }
      });
      await Promise.race([Promise.all(runs), aborted]);
      // At the deadline, a provider that was part-way through (e.g. MusicBrainz had its match but
      // not yet the label) gets a moment to hand over what it has: "keep whatever arrived in time".
      if (signal.aborted) await Promise.race([Promise.all(runs), sleep(ABORT_GRACE_MS)]);
      // Merge in plan order so the result does not depend on which provider answered first.
      const before = added;
      stage.forEach((enricher, index) => {
        const result = settled[index];
        if (!result) return;
        if (result.fields) added = fillEmptyFields(added, onlyEmptyIn(track, result.fields), enricher.name, result.sources);
        if (result.images) images.push(...result.images);
      });
      if (added !== before && !options.signal?.aborted) options.onProgress?.(added.fields, added.sources);
    }
    const timedOut = signal.aborted && !options.signal?.aborted;
    if (timedOut) options.logger.warn(`enrichment: deadline of ${options.deadlineMs} ms reached, keeping what arrived`);
    return { added: added.fields, sources: added.sources, images, timedOut };
  } finally {
    finished.abort(new Error('enrichment finished'));
    deadline.dispose();
  }
}

/** The fields of `found` that the submitted track has empty: enrichment never overrides the submitter. */
function onlyEmptyIn(track: Readonly<TrackFields>, found: Readonly<TrackFields>): TrackFields {
  return Object.fromEntries(Object.entries(found).filter(([key]) => isEmpty(track[key])));
}
