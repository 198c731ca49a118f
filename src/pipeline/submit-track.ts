import { withDeadline } from '../signals';
import type { ImageIntake, StoredCover } from '../domain/image-intake';
import type { ImageCandidate, TrackFields } from '../domain/track';
import type { EnrichmentPlan } from '../enrich/enricher';
import { fillEmptyFields } from '../domain/fill-empty-fields';
import { runEnrichers } from '../enrich/run-enrichers';
import { AppError } from '../errors';
import type { Logger } from '../log';
import type { TrackStore } from '../store/tracks';
import { authenticate } from './authenticate';
import type { NowPlaying } from '../store/now-playing';
import { parseSubmission, type RawRequest } from './parse';
import { sanitize } from './sanitize';
import { requireIdentifyingField } from './validate';

// The /v1/remoteinput use case, told in the order of the contract:
// parse -> authenticate -> sanitize -> validate -> enrich -> store -> publish -> respond.

export interface SubmitDeps {
  secret: string;
  maxFields: number;
  maxFieldLength: number;
  processingTimeoutSeconds: number;
  enrichmentDeadlineSeconds: number;
  plan: EnrichmentPlan;
  tracks: TrackStore;
  nowPlaying: NowPlaying;
  logger: Logger;
  /** Where images go; without it a submitted `coverurl` is dropped and no image is fetched. */
  images?: ImageIntake;
}

/** Part of processingTimeoutSeconds a submitted cover may take (the fetcher's own limit is 10 s). */
const COVER_SHARE_OF_BUDGET = 0.8;

export interface SubmitResult {
  dbid: number;
  processed_metadata: TrackFields;
  warnings?: string[];
}

export async function submitTrack(request: RawRequest, receivedSeq: number, deps: SubmitDeps): Promise<SubmitResult> {
  const receivedAt = new Date().toISOString();
  const { fields: rawFields, credential } = parseSubmission(request, deps);
  authenticate(credential, deps.secret);
  const { fields, warnings, submittedCoverUrl, recognitionInput } = sanitize(rawFields, { maxFieldLength: deps.maxFieldLength });
  requireIdentifyingField(fields);

  const record = await withProcessingTimeout(deps.processingTimeoutSeconds, async (signal) => {
    // The submitted cover downloads while enrichment runs, and gives up well inside the
    // processing budget: a slow cover costs the cover, never the submission (no 408 for it).
    const { images } = deps;
    const submittedCover: Promise<{ cover?: StoredCover; warning?: string }> =
      submittedCoverUrl !== undefined && images
        ? withDeadline(deps.processingTimeoutSeconds * 1000 * COVER_SHARE_OF_BUDGET, [signal], (coverSignal) =>
            images.fetchSubmittedCover(submittedCoverUrl, coverSignal),
          )
        : Promise.resolve({});
    const enrichmentEnds = Date.now() + deps.enrichmentDeadlineSeconds * 1000;
    const enrichment = await runEnrichers({ ...fields, ...recognitionInput }, deps.plan, {
      deadlineMs: deps.enrichmentDeadlineSeconds * 1000,
      signal,
      logger: deps.logger,
    });
    const { cover: submitted, warning } = await submittedCover;
    if (warning) warnings.push(warning);
    const cover =
      submitted ?? (await deps.images?.knownCover(enrichment.images)) ?? (await enrichmentCover(deps.images, enrichment.images, enrichmentEnds, signal));
    // The use case owns the merge: enrichment only fills what the submission left empty.
    const enriched = fillEmptyFields({ fields: { ...fields, ...recognitionInput }, sources: {} }, enrichment.added, 'enrichment', enrichment.sources);
    // The stored record keeps the truncated values the response warned about.
    const metadata: TrackFields = { ...enriched.fields, ...pick(fields, Object.keys(recognitionInput ?? {})) };
    // `coverurl` only ever names an image in our store (decisions.md: never echoed).
    delete metadata.coverurl;
    if (cover) metadata.coverurl = cover.url;
    if (Object.keys(enriched.sources).length > 0) metadata.enrichment_sources = enriched.sources;
    // 408 means nothing is stored: a timed-out submission stops here even if enrichment finishes later.
    signal.throwIfAborted();
    const stored = await deps.tracks.insert({ receivedSeq, receivedAt, metadata });
    deps.nowPlaying.offer(stored);
    try {
      await deps.images?.collect(stored, cover, enrichment.images);
    } finally {
      deps.nowPlaying.settle(stored);
    }
    return stored;
  });

  const result: SubmitResult = { dbid: record.dbid, processed_metadata: record.metadata };
  if (warnings.length > 0) result.warnings = warnings;
  return result;
}

/** Validation only: what a GET would answer, without enrichment or storage (HEAD never creates a record). */
export function checkSubmission(request: RawRequest, deps: Pick<SubmitDeps, 'secret' | 'maxFieldLength' | 'maxFields'>): void {
  const { fields: rawFields, credential } = parseSubmission(request, deps);
  authenticate(credential, deps.secret);
  requireIdentifyingField(sanitize(rawFields, { maxFieldLength: deps.maxFieldLength }).fields);
}

/** The found front cover, downloaded in what is left of the enrichment deadline (later ones come by the stream). */
async function enrichmentCover(
  images: ImageIntake | undefined,
  candidates: readonly ImageCandidate[],
  endsAt: number,
  signal: AbortSignal,
): Promise<StoredCover | undefined> {
  const remainingMs = endsAt - Date.now();
  if (!images || remainingMs <= 0 || !candidates.some((candidate) => candidate.category === 'cover')) return undefined;
  return withDeadline(remainingMs, [signal], (coverSignal) => images.fetchEnrichmentCover(candidates, coverSignal));
}

function pick(fields: TrackFields, keys: readonly string[]): TrackFields {
  return Object.fromEntries(keys.filter((key) => key in fields).map((key) => [key, fields[key]]));
}

async function withProcessingTimeout<T>(seconds: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Built here, not up front: an error captures a stack, and most submissions never time out.
      const timeout = new AppError('PROCESSING_TIMEOUT', `Metadata processing exceeded ${seconds} seconds`);
      controller.abort(timeout);
      reject(timeout);
    }, seconds * 1000);
  });
  try {
    return await Promise.race([work(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}
