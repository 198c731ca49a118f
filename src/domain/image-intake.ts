import type { ImageCandidate, ImageCategory, TrackFields, TrackRecord } from './track';

// The port between the submission use case (pipeline/) and the image collector (images/): both
// import it from here, so neither imports the other.

/** A cover in the image store; `url` is what `coverurl` says: `cover/<key>`. */
export interface StoredCover {
  key: string;
  url: string;
  /** Who supplied it: `submitted`, or the provider that found it. */
  source: string;
}

/** An image already in the store that a record shows (linked to it). */
export interface KnownImage {
  category: ImageCategory;
  key: string;
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
   * The images the store already holds for a track about to be announced (docs/decisions.md
   * "Complete frames"): its cover (a candidate downloaded before, else one linked to the same
   * artist and album) and one of each artist image (the same artist). Never throws: [] then.
   */
  knownImages(track: Readonly<TrackFields>, candidates: readonly ImageCandidate[]): Promise<KnownImage[]>;
  /** Links stored images to a record now (announced when it is current). */
  link(record: TrackRecord, images: readonly KnownImage[]): Promise<void>;
  /**
   * Links the images already stored (resolves then) and downloads the others in the background.
   * A cover found in the background is handed to `onCover`; the intake never writes a track row.
   */
  collect(record: TrackRecord, cover: StoredCover | undefined, candidates: readonly ImageCandidate[], onCover?: (cover: StoredCover) => void): Promise<void>;
  /** Resolves when no background download of record `dbid` is running here. Never rejects. */
  downloaded(dbid: number): Promise<void>;
}
