import type { ImageCategory, TrackImage, TrackRecord } from '../domain/track';
import { keyOfCoverUrl } from '../domain/image';
import type { NowPlaying } from '../store/now-playing';
import type { ImageStore, StoredImage } from '../store/images';

// The current track's one image per category, for /cover.png, /artist*.png and the /wsstream
// frames (docs/chat-bots-and-obs.md "OBS image sources"). The cover is the one `coverurl`
// names (submitted or found); the artist images are the first of their category linked to the
// track. The answer for the current track is kept until its images or its record change, so an
// OBS source polling the URL costs no query.

export type CurrentImageSet = Partial<Record<ImageCategory, StoredImage>>;

export interface CurrentImagesDeps {
  nowPlaying: NowPlaying;
  store: Pick<ImageStore, 'imagesOf' | 'meta'>;
  /** The collector's announcements: an image linked to the current track (here or by another instance). */
  announcements: { on(event: 'image', listener: (image: TrackImage) => void): unknown };
}

export class CurrentImages {
  private memo: { dbid: number; images: Promise<CurrentImageSet> } | null = null;

  constructor(private readonly deps: CurrentImagesDeps) {
    const forget = () => {
      this.memo = null;
    };
    deps.nowPlaying.on('track-changed', forget);
    deps.nowPlaying.on('track-updated', forget);
    deps.announcements.on('image', (image) => {
      if (this.memo?.dbid === image.dbid) forget();
    });
  }

  /** The images of `record` (the current one is remembered; another is looked up). */
  of(record: TrackRecord): Promise<CurrentImageSet> {
    if (this.memo?.dbid === record.dbid) return this.memo.images;
    const images = this.lookUp(record);
    if (this.deps.nowPlaying.current()?.dbid === record.dbid) {
      this.memo = { dbid: record.dbid, images };
      // A failed lookup (database away) is not remembered.
      images.catch(() => {
        if (this.memo?.images === images) this.memo = null;
      });
    }
    return images;
  }

  private async lookUp(record: TrackRecord): Promise<CurrentImageSet> {
    const found: CurrentImageSet = {};
    for (const image of await this.deps.store.imagesOf(record.dbid)) {
      if (image.category !== 'cover') found[image.category] ??= image;
    }
    const coverurl = record.metadata.coverurl;
    const coverKey = typeof coverurl === 'string' ? keyOfCoverUrl(coverurl) : null;
    const cover = coverKey === null ? null : await this.deps.store.meta(coverKey);
    if (cover) found.cover = cover;
    return found;
  }
}
