import { createHash } from 'node:crypto';
import type { ImageCategory } from '../domain/track';
import { MAX_IMAGE_BYTES, sniffImageType, type ImageMimeType } from '../domain/image';

// The image store (docs/streams.md "The image store"): content-addressed blobs in SQLite, their sniffed MIME
// type, the links from track records by category, and least-recently-used eviction past
// `images.maxTotalBytes`. The contract and the rules both backends share; the bodies are
// sqlite/images.ts and postgres/images.ts.

/** A served image is marked as used at most this often, so a busy overlay does not write per request. */
export const TOUCH_INTERVAL_MS = 60_000;

export interface StoredImage {
  key: string;
  mimeType: ImageMimeType;
  size: number;
}

export interface LinkedImage extends StoredImage {
  dbid: number;
  category: ImageCategory;
  source: string;
}

export interface NewLink {
  dbid: number;
  category: ImageCategory;
  key: string;
  /** Normalized names (images/names.ts) the image clients look images up by. */
  artistKey: string;
  albumKey: string;
  source: string;
}

export class ImageRejected extends Error {
  constructor(
    readonly reason: 'not-an-image' | 'too-large' | 'over-budget',
    message: string,
  ) {
    super(message);
    this.name = 'ImageRejected';
  }
}

export interface ImageStore {
  /** Stores the bytes (idempotent by key) and evicts the least recently used others past the bound. */
  put(bytes: Buffer): Promise<StoredImage>;
  /** Metadata and bytes; marks the image as used. */
  get(key: string): Promise<(StoredImage & { bytes: Buffer }) | null>;
  meta(key: string): Promise<StoredImage | null>;
  /** Metadata of an image about to be served in chunks; marks it as used. */
  use(key: string): Promise<StoredImage | null>;
  /**
   * `length` bytes from `offset` (fewer at the end), so a large reply is read piece by piece as
   * its reader takes it; null once the image is gone. Reading from offset 0 marks it as used.
   */
  slice(key: string, offset: number, length: number): Promise<Buffer | null>;
  /** Links stored images to a track in one transaction; returns the links that are new. */
  link(links: readonly NewLink[]): Promise<NewLink[]>;
  /** A track's images in the order they arrived. */
  imagesOf(dbid: number): Promise<LinkedImage[]>;
  /** Distinct images of an artist (and album), most recently linked first. */
  find(query: { category: ImageCategory; artistKey: string; albumKey?: string }): Promise<StoredImage[]>;
  /**
   * The newest image of each category an artist's tracks were linked to, in one read: the cover
   * only from the album `albumKey` (none when it is ''), the others from any of the artist's tracks.
   * Each is what find()'s first answer would be.
   */
  newestOfArtist(artistKey: string, albumKey: string): Promise<Partial<Record<ImageCategory, StoredImage>>>;
  /** The image a provider URL was downloaded into earlier, if it is still stored. */
  keyForUrl(url: string): Promise<string | null>;
  rememberUrl(url: string, key: string): Promise<void>;
}

export interface ImageStoreOptions {
  maxTotalBytes: number;
  /** Clock in milliseconds; tests pass their own to order uses. */
  now?: () => number;
}

/** The checks every backend makes before storing bytes: a known image type, within both limits. */
export function admitImage(bytes: Buffer, maxTotalBytes: number): { key: string; mimeType: ImageMimeType } {
  const mimeType = sniffImageType(bytes);
  if (!mimeType) throw new ImageRejected('not-an-image', 'not a JPEG, PNG, WebP or GIF image');
  if (bytes.length > MAX_IMAGE_BYTES) throw new ImageRejected('too-large', `image of ${bytes.length} bytes is over the per-image limit`);
  // The image alone would overflow the configured store: it could never be kept.
  if (bytes.length > maxTotalBytes) throw new ImageRejected('over-budget', `image of ${bytes.length} bytes is over images.maxTotalBytes`);
  return { key: sha256(bytes), mimeType };
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}
