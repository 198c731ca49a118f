import type { ImageCandidate, TrackRecord } from './track';

// The port between the submission use case (pipeline/) and the image collector (images/): both
// import it from here, so neither imports the other.

/** A cover in the image store; `url` is what `coverurl` says: `cover/<key>`. */
export interface StoredCover {
  key: string;
  url: string;
  /** Who supplied it: `submitted`, or the provider that found it. */
  source: string;
}

/** The image store's side of a submission (implemented by images/collector.ts). */
export interface ImageIntake {
  /** Fetches and stores a submitted `coverurl`. Never throws: a cover that cannot be had is a warning. */
  fetchSubmittedCover(coverurl: string, signal: AbortSignal): Promise<{ cover?: StoredCover; warning?: string }>;
  /**
   * Downloads the first enrichment cover candidate that can be had before `signal` aborts (the
   * enrichment deadline), so the answer carries it. Never throws.
   */
  fetchEnrichmentCover(candidates: readonly ImageCandidate[], signal: AbortSignal): Promise<StoredCover | undefined>;
  /** A cover among the candidates that is already in the store (a track seen before): no download. */
  knownCover(candidates: readonly ImageCandidate[]): Promise<StoredCover | undefined>;
  /**
   * Links the images already stored (resolves then) and downloads the others in the background.
   * A cover found in the background is handed to `onCover`; the intake never writes a track row.
   */
  collect(record: TrackRecord, cover: StoredCover | undefined, candidates: readonly ImageCandidate[], onCover?: (cover: StoredCover) => void): Promise<void>;
}
