import { EventEmitter, setMaxListeners } from 'node:events';
import { IMAGE_CATEGORIES, fieldText, type ImageCandidate, type ImageCategory, type TrackFields, type TrackImage, type TrackRecord } from '../domain/track';
import { errorMessage } from '../errors';
import type { Logger } from '../log';
import { anySignal } from '../signals';
import type { NowPlaying } from '../domain/current-track';
import { MAX_IMAGE_BYTES, coverUrlFor, keyOfCoverUrl } from '../domain/image';
import { BoundedMap } from '../domain/bounded-map';
import type { ImageIntake, KnownImage, StoredCover } from '../domain/image-intake';
import { ImageRejected, type ImageStore, type StoredImage } from '../store/images';
import { isStorageUnavailable } from '../store/health';
import { ImageFetchError, parseFetchableUrl, type FetchFailure, type ImageFetcher } from './fetch-image';
import { nameKey } from './names';

// Gets a track's images into the store and out to viewers: the submitted cover and the found
// cover while the submission is processed (so the 200 already carries `coverurl`), the other
// enrichment images after it, in the background. It never writes a track row: a cover found in
// the background is handed back to the submission's update path (pipeline/record-updates.ts).
// Every image that becomes available for the current track is announced with an 'image' event
// (the WebSocket hub turns it into a frame).

interface CollectorEvents {
  image: [TrackImage];
  /** Every background download of record `dbid` has ended (docs/whats-now-playing.md "One frame per change"). */
  'images-idle': [number];
}

export interface CollectorDeps {
  store: ImageStore;
  nowPlaying: NowPlaying;
  fetchImage: ImageFetcher;
  logger: Logger;
}

const ARTIST_IMAGE_CATEGORIES: readonly ImageCategory[] = IMAGE_CATEGORIES.filter((category) => category !== 'cover');

/** More candidates than this for one track are ignored (a slideshow needs a handful). */
const MAX_CANDIDATES_PER_TRACK = 16;
/** A provider image URL that failed is not asked again for this long (a track is played often). */
const FAILED_URL_RETRY_MS = 60 * 60 * 1000;
/** Provider URLs remembered in memory, for their image key or their failure (each map). */
const URLS_IN_MEMORY = 5000;
/** Background downloads of one track that run at the same time. */
const DOWNLOADS_IN_PARALLEL = 3;

const FAILURE_TEXT: Readonly<Record<FetchFailure | ImageRejected['reason'], string>> = {
  'bad-url': 'not an http(s) URL',
  'refused-address': 'its host is a local or reserved address',
  'too-many-redirects': 'too many redirects',
  'http-status': 'the server did not answer with an image',
  'too-large': `the image is larger than ${MAX_IMAGE_BYTES / (1024 * 1024)} MiB`,
  'over-budget': 'the image is larger than the whole image store (images.maxTotalBytes)',
  'not-an-image': 'not a JPEG, PNG, WebP or GIF image',
  timeout: 'the download took too long',
  network: 'the server could not be reached',
};

/** An image of the store to link to a track. */
type Linkable = KnownImage;

export class ImageCollector extends EventEmitter<CollectorEvents> implements ImageIntake {
  private readonly pending = new Set<Promise<void>>();
  /** Background downloads under way, per record. */
  private readonly busyRecords = new Map<number, number>();
  private readonly shutdown = new AbortController();
  private readonly urlKeys = new BoundedMap<string, string>({ maxEntries: URLS_IN_MEMORY });
  /** Provider URLs that failed -> when they may be tried again. */
  private readonly failedUrls = new BoundedMap<string, number>({ maxEntries: URLS_IN_MEMORY });

  constructor(private readonly deps: CollectorDeps) {
    super();
    // Every WebSocket hub listens once; more listeners are not per client.
    this.setMaxListeners(0);
    // Every background download listens to the shutdown signal while it runs or waits for a slot.
    setMaxListeners(0, this.shutdown.signal);
  }

  async fetchSubmittedCover(coverurl: string, signal: AbortSignal): Promise<{ cover?: StoredCover; warning?: string }> {
    // Our own reference (e.g. `svc last | svc submit`): kept when the image is stored here.
    const own = keyOfCoverUrl(coverurl);
    if (own && (await this.deps.store.meta(own))) return { cover: toCover(own, 'submitted') };
    const url = parseFetchableUrl(coverurl);
    if (!url) return { warning: "Field 'coverurl' dropped: not an http(s) URL" };
    try {
      const image = await this.download(coverurl, signal);
      return { cover: toCover(image.key, 'submitted') };
    } catch (error) {
      const outOfTime = signal.aborted && isTimeout(signal.reason);
      // Abandoned with its submission (408, shutdown): nobody is left to warn.
      if (signal.aborted && !outOfTime) return {};
      if (!isStorageUnavailable(error))
        this.deps.logger.warn(`cover from ${url.host} not stored: ${outOfTime ? 'out of processing time' : errorMessage(error)}`);
      return { warning: `Field 'coverurl' dropped: ${outOfTime ? FAILURE_TEXT.timeout : failureText(error)}` };
    }
  }

  async fetchEnrichmentCover(candidates: readonly ImageCandidate[], signal: AbortSignal): Promise<StoredCover | undefined> {
    // In the providers' order: the release's front cover, else the release group's (both from the
    // Cover Art Archive, which names one), else a provider's album cover (fanart.tv).
    for (const candidate of uniqueByUrl(candidates)) {
      if (candidate.category !== 'cover') continue;
      if (signal.aborted || this.shutdown.signal.aborted) return undefined;
      const image = await this.tryCandidate(candidate, signal);
      if (image) return toCover(image.key, candidate.source);
    }
    return undefined;
  }

  async knownCover(candidates: readonly ImageCandidate[]): Promise<StoredCover | undefined> {
    for (const candidate of candidates) {
      if (candidate.category !== 'cover') continue;
      const stored = await this.storedImageFor(candidate.url);
      if (stored) return toCover(stored.key, candidate.source);
    }
    return undefined;
  }

  async knownImages(track: Readonly<TrackFields>, candidates: readonly ImageCandidate[]): Promise<KnownImage[]> {
    const artistKey = nameKey(fieldText(track, 'artist') ?? '');
    if (artistKey === '') return [];
    const albumKey = nameKey(fieldText(track, 'album') ?? '');
    try {
      // One read of the store for every category, beside the candidates downloaded before (which
      // come first): on PostgreSQL each read is a round trip on a pool every submission shares.
      const [stored, cover, ...artistImages] = await Promise.all([
        this.deps.store.newestOfArtist(artistKey, albumKey),
        this.knownCover(candidates),
        ...ARTIST_IMAGE_CATEGORIES.map((category) => this.knownCandidate(category, candidates)),
      ]);
      const fromStore = (category: ImageCategory): KnownImage | undefined => {
        const image = stored[category];
        return image && { category, key: image.key, source: 'image store' };
      };
      const found = [
        cover ? { category: 'cover' as const, key: cover.key, source: cover.source } : fromStore('cover'),
        ...ARTIST_IMAGE_CATEGORIES.map((category, index) => artistImages[index] ?? fromStore(category)),
      ];
      return found.filter((image): image is KnownImage => image !== undefined);
    } catch (error) {
      // Only the first frame is poorer for it: the images still come by the usual path.
      if (!isStorageUnavailable(error)) this.deps.logger.warn(`known images not read: ${errorMessage(error)}`);
      return [];
    }
  }

  async link(record: TrackRecord, images: readonly KnownImage[]): Promise<void> {
    await this.linkAndAnnounce(record, images);
  }

  /** A candidate of `category` downloaded before. */
  private async knownCandidate(category: ImageCategory, candidates: readonly ImageCandidate[]): Promise<KnownImage | undefined> {
    for (const candidate of candidates) {
      if (candidate.category !== category) continue;
      const stored = await this.storedImageFor(candidate.url);
      if (stored) return { category, key: stored.key, source: candidate.source };
    }
    return undefined;
  }

  async collect(
    record: TrackRecord,
    cover: StoredCover | undefined,
    candidates: readonly ImageCandidate[],
    onCover: (cover: StoredCover) => void = () => undefined,
  ): Promise<void> {
    const wanted = uniqueByUrl(candidates).slice(0, MAX_CANDIDATES_PER_TRACK);
    // Images downloaded before (a track seen before) are linked at once, in one transaction;
    // only the others are fetched in the background.
    const known: Linkable[] = cover ? [{ category: 'cover', key: cover.key, source: cover.source }] : [];
    const toFetch: ImageCandidate[] = [];
    try {
      for (const candidate of wanted) {
        if (candidate.category === 'cover' && cover) continue; // the first cover wins
        const stored = await this.storedImageFor(candidate.url);
        if (stored) known.push({ category: candidate.category, key: stored.key, source: candidate.source });
        else toFetch.push(candidate);
      }
      await this.linkAndAnnounce(record, known);
    } catch (error) {
      // The record is stored already: a database that fails now costs the images, not the submission.
      this.deps.logger.warn(`images of track ${record.dbid} not linked: ${errorMessage(error)}`);
      return;
    }
    if (toFetch.length === 0) return;
    const hasCover = known.some((image) => image.category === 'cover');
    const work = this.collectInBackground(record, hasCover, toFetch, onCover).catch((error: unknown) => {
      // A full disk is logged once a minute by the store's health, not once per track here.
      if (!isStorageUnavailable(error)) this.deps.logger.error(`images of track ${record.dbid}: ${errorMessage(error)}`);
    });
    this.pending.add(work);
    this.busyRecords.set(record.dbid, (this.busyRecords.get(record.dbid) ?? 0) + 1);
    void work.finally(() => {
      this.pending.delete(work);
      const left = (this.busyRecords.get(record.dbid) ?? 1) - 1;
      if (left > 0) {
        this.busyRecords.set(record.dbid, left);
        return;
      }
      this.busyRecords.delete(record.dbid);
      this.emit('images-idle', record.dbid);
    });
  }

  downloaded(dbid: number): Promise<void> {
    if (!this.busyRecords.has(dbid)) return Promise.resolve();
    return new Promise((resolve) => {
      const idle = (done: number) => {
        if (done !== dbid) return;
        this.off('images-idle', idle);
        resolve();
      };
      this.on('images-idle', idle);
    });
  }

  /** Whether images of record `dbid` are downloading here now ('images-idle' tells when they have ended). */
  downloading(dbid: number): boolean {
    return this.busyRecords.has(dbid);
  }

  /** The stored images of a track, as announced (for a viewer that connects later). */
  async imagesOf(record: TrackRecord): Promise<TrackImage[]> {
    return (await this.deps.store.imagesOf(record.dbid)).map((image) => announcement(record, image.category, image));
  }

  /** Resolves once every background download has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Abandons the background downloads. */
  async close(): Promise<void> {
    this.shutdown.abort(new Error('server shutting down'));
    await this.idle();
  }

  private async collectInBackground(
    record: TrackRecord,
    hasCover: boolean,
    candidates: readonly ImageCandidate[],
    onCover: (cover: StoredCover) => void,
  ): Promise<void> {
    // The cover and the artist images download side by side (docs/streams.md "The image store"):
    // a slow cover host never holds back the artist's thumbnail. The first cover candidate that
    // downloads becomes `coverurl`.
    const covers = async () => {
      if (hasCover) return;
      for (const candidate of candidates.filter((c) => c.category === 'cover')) {
        if (this.shutdown.signal.aborted) return;
        const image = await this.tryCandidate(candidate);
        if (image) {
          onCover(toCover(image.key, candidate.source));
          await this.linkAndAnnounce(record, [{ category: 'cover', key: image.key, source: candidate.source }]);
          return;
        }
      }
    };
    const queue = candidates.filter((c) => c.category !== 'cover');
    const worker = async () => {
      for (let candidate = queue.shift(); candidate; candidate = queue.shift()) {
        if (this.shutdown.signal.aborted) return;
        const image = await this.tryCandidate(candidate);
        if (image) await this.linkAndAnnounce(record, [{ category: candidate.category, key: image.key, source: candidate.source }]);
      }
    };
    await Promise.all([covers(), ...Array.from({ length: DOWNLOADS_IN_PARALLEL }, worker)]);
  }

  /** The image a URL was downloaded into earlier, if it is still stored. */
  private async storedImageFor(url: string): Promise<StoredImage | null> {
    // Provider URLs name fixed content, so the URL-to-key answer is kept in memory (bounded);
    // whether the image is still stored (eviction) is asked every time.
    let key = this.urlKeys.get(url) ?? null;
    if (key === null) {
      key = await this.deps.store.keyForUrl(url);
      if (key !== null) this.urlKeys.set(url, key);
    }
    return key === null ? null : this.deps.store.meta(key);
  }

  /**
   * Downloads a provider image; null (logged once) when it cannot be had. A caller that runs out
   * of time (`signal`) leaves the URL to the background download, so it is not marked failed.
   */
  private async tryCandidate(candidate: ImageCandidate, signal?: AbortSignal): Promise<StoredImage | null> {
    const stored = await this.storedImageFor(candidate.url);
    if (stored) return stored;
    const retryAt = this.failedUrls.get(candidate.url);
    if (retryAt !== undefined && retryAt > Date.now()) return null;
    const stop = signal ? anySignal([this.shutdown.signal, signal]) : this.shutdown.signal;
    try {
      const image = await this.download(candidate.url, stop);
      await this.deps.store.rememberUrl(candidate.url, image.key);
      this.urlKeys.set(candidate.url, image.key);
      return image;
    } catch (error) {
      if (!stop.aborted) {
        this.failedUrls.set(candidate.url, Date.now() + FAILED_URL_RETRY_MS);
        const host = parseFetchableUrl(candidate.url)?.host ?? 'an invalid URL';
        if (!isStorageUnavailable(error))
          this.deps.logger.warn(`${candidate.category} image from ${candidate.source} (${host}) not stored: ${errorMessage(error)}`);
      }
      return null;
    }
  }

  private async download(url: string, signal: AbortSignal): Promise<StoredImage> {
    const fetched = await this.deps.fetchImage(url, signal);
    return this.deps.store.put(fetched.bytes);
  }

  private async linkAndAnnounce(record: TrackRecord, images: readonly Linkable[]): Promise<void> {
    if (images.length === 0) return;
    const artistKey = nameKey(fieldText(record.metadata, 'artist') ?? '');
    const albumKey = nameKey(fieldText(record.metadata, 'album') ?? '');
    const added = await this.deps.store.link(images.map((image) => ({ dbid: record.dbid, ...image, artistKey, albumKey })));
    // Frames are for the track on screen; an older track's images are stored, not announced.
    if (this.deps.nowPlaying.current()?.dbid !== record.dbid) return;
    for (const link of added) {
      const image = await this.deps.store.meta(link.key);
      if (image) this.emit('image', announcement(record, link.category, image));
    }
  }

  /** Announces an image another instance linked (store change), when its track is on screen. */
  async announceLinked(record: TrackRecord, category: ImageCategory, key: string): Promise<void> {
    if (this.deps.nowPlaying.current()?.dbid !== record.dbid) return;
    const image = await this.deps.store.meta(key);
    if (image) this.emit('image', announcement(record, category, image));
  }
}

function announcement(record: TrackRecord, category: ImageCategory, image: StoredImage): TrackImage {
  return {
    dbid: record.dbid,
    category,
    key: image.key,
    mimeType: image.mimeType,
    artist: fieldText(record.metadata, 'artist'),
    title: fieldText(record.metadata, 'title'),
    album: fieldText(record.metadata, 'album'),
  };
}

function toCover(key: string, source: string): StoredCover {
  return { key, url: coverUrlFor(key), source };
}

function uniqueByUrl(candidates: readonly ImageCandidate[]): ImageCandidate[] {
  const seen = new Set<string>();
  return candidates.filter((candidate) => {
    const key = `${candidate.category} ${candidate.url}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** AbortSignal.timeout()'s reason: a DOMException, checked by name (it may come from another realm). */
function isTimeout(reason: unknown): boolean {
  return typeof reason === 'object' && reason !== null && 'name' in reason && reason.name === 'TimeoutError';
}

function failureText(error: unknown): string {
  if (error instanceof ImageFetchError || error instanceof ImageRejected) return FAILURE_TEXT[error.reason];
  return 'the cover could not be stored';
}
