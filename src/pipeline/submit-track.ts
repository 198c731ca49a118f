import type { FieldValue, ImageCandidate, TrackFields, TrackRecord } from '../domain/track';
import type { EnrichmentPlan } from '../enrich/enricher';
import { runEnrichers } from '../enrich/run-enrichers';
import { AppError } from '../errors';
import type { Logger } from '../log';
import type { TrackStore } from '../store/tracks';
import { authenticate } from './authenticate';
import type { NowPlaying } from './now-playing';
import { parseSubmission, type RawRequest } from './parse';
import { sanitize } from './sanitize';
import { requireIdentifyingField } from './validate';

// The /v1/remoteinput use case, told in the order of the contract:
// parse -> authenticate -> sanitize -> validate -> enrich -> store -> publish -> respond.

export interface SubmitDeps {
  secret: string;
  maxFieldLength: number;
  processingTimeoutSeconds: number;
  enrichmentDeadlineSeconds: number;
  plan: EnrichmentPlan;
  tracks: TrackStore;
  nowPlaying: NowPlaying;
  logger: Logger;
  /**
   * Hands images (a submitted cover URL, enrichment finds) to the image store once the record
   * exists; downloads may finish after the response.
   */
  onImages?: (record: TrackRecord, images: ImageCandidate[], submittedCoverUrl: string | undefined) => void;
}

export interface SubmitResult {
  dbid: number;
  processed_metadata: TrackFields;
  warnings?: string[];
}

export async function submitTrack(request: RawRequest, receivedSeq: number, deps: SubmitDeps): Promise<SubmitResult> {
  const receivedAt = new Date().toISOString();
  const { fields: rawFields, credential } = parseSubmission(request);
  authenticate(credential, deps.secret);
  const { fields, warnings, submittedCoverUrl, recognitionInput } = sanitize(rawFields, { maxFieldLength: deps.maxFieldLength });
  requireIdentifyingField(fields);

  const record = await withProcessingTimeout(deps.processingTimeoutSeconds, async (signal) => {
    const enriched = await runEnrichers({ ...fields, ...recognitionInput }, deps.plan, {
      deadlineMs: deps.enrichmentDeadlineSeconds * 1000,
      signal,
      logger: deps.logger,
    });
    // The stored record keeps the truncated values the response warned about.
    const metadata: TrackFields = { ...enriched.fields, ...pick(fields, Object.keys(recognitionInput ?? {})) };
    if (Object.keys(enriched.sources).length > 0) metadata.enrichment_sources = enriched.sources;
    // 408 means nothing is stored: a timed-out submission stops here even if enrichment finishes later.
    signal.throwIfAborted();
    const stored = deps.tracks.insert({ receivedSeq, receivedAt, metadata });
    deps.nowPlaying.offer(stored);
    deps.onImages?.(stored, enriched.images, submittedCoverUrl);
    return stored;
  });

  const result: SubmitResult = { dbid: record.dbid, processed_metadata: record.metadata };
  if (warnings.length > 0) result.warnings = warnings;
  return result;
}

/** Validation only: what a GET would answer, without enrichment or storage (HEAD never creates a record). */
export function checkSubmission(request: RawRequest, deps: Pick<SubmitDeps, 'secret' | 'maxFieldLength'>): void {
  const { fields: rawFields, credential } = parseSubmission(request);
  authenticate(credential, deps.secret);
  requireIdentifyingField(sanitize(rawFields, { maxFieldLength: deps.maxFieldLength }).fields);
}

function pick(fields: TrackFields, keys: readonly string[]): TrackFields {
  return Object.fromEntries(keys.filter((key) => key in fields).map((key) => [key, fields[key] as FieldValue]));
}

async function withProcessingTimeout<T>(seconds: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timeout = new AppError('PROCESSING_TIMEOUT', `Metadata processing exceeded ${seconds} seconds`);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
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
