import { EventEmitter } from 'node:events';
import { fieldText, type ImageCategory, type TrackImage, type TrackRecord } from '../../domain/track';
import { keyOfCoverUrl } from '../../domain/image';
import type { NowPlaying } from '../../domain/current-track';
import type { ImageStore, StoredImage } from '../../store/images';

// The current track's one image per category, for /cover.png, /artist*.png and the /wsstream
// frames (docs/chat-bots-and-obs.md "OBS image sources"). The cover is the one `coverurl`
// names (submitted or found); the artist images are the first of their category linked to the
// track. The answer for the current track is kept until its images or its record change, so an
// OBS source polling the URL costs no query.

export type CurrentImageSet = Partial<Record<ImageCategory, StoredImage>>;

/**
 * What's Now Playing's `artistextras/coverfornothumbs` (on by default there): the cover stands in
 * for a missing artist thumbnail (docs/whats-now-playing.md "Cover for no thumbnail").
 */
export function withCoverForNoThumb(images: CurrentImageSet, on: boolean): CurrentImageSet {
  return on && !images.thumbnail && images.cover ? { ...images, thumbnail: images.cover } : images;
}

export interface CurrentImagesDeps {
  nowPlaying: NowPlaying;
  store: Pick<ImageStore, 'imagesOf' | 'meta'>;
  /** The collector's announcements: an image linked to the current track (here or by another instance). */
  announcements: { on(event: 'image', listener: (image: TrackImage) => void): unknown };
}

interface CurrentImagesEvents {
  /** An image arrived that the current track had none of in its category (a /wsstream frame changes). */
  'artist-image': [TrackImage];
}

export class CurrentImages extends EventEmitter<CurrentImagesEvents> {
  private memo: { dbid: number; images: Promise<CurrentImageSet>; known?: CurrentImageSet } | null = null;

  constructor(private readonly deps: CurrentImagesDeps) {
    super();
    const forget = () => {
      this.memo = null;
    };
    deps.nowPlaying.on('track-changed', forget);
    deps.nowPlaying.on('track-updated', forget);
    deps.announcements.on('image', (image) => {
      // A cover changes the record's coverurl, which 'track-updated' tells; a second image of
      // a category changes nothing (the first one stays).
      if (image.category === 'cover' || image.dbid !== this.deps.nowPlaying.current()?.dbid) return;
      const pick = this.memo?.dbid === image.dbid ? this.memo.known?.[image.category] : undefined;
      if (pick && pick.key !== image.key) return;
      // A lookup that ran between the link and this announcement already holds it: nothing to forget.
      if (!pick) forget();
      this.emit('artist-image', image);
    });
  }

  /** The images of `record` (the current one is remembered; another is looked up). */
  of(record: TrackRecord): Promise<CurrentImageSet> {
    if (this.memo?.dbid === record.dbid) return this.memo.images;
    const images = this.lookUp(record);
    if (this.deps.nowPlaying.current()?.dbid === record.dbid) {
      const memo: NonNullable<typeof this.memo> = { dbid: record.dbid, images };
      this.memo = memo;
      images.then(
        (known) => {
          memo.known = known;
        },
        // A failed lookup (database away) is not remembered.
        () => {
          if (this.memo === memo) this.memo = null;
        },
      );
    }
    return images;
  }

  private async lookUp(record: TrackRecord): Promise<CurrentImageSet> {
    const found: CurrentImageSet = {};
    for (const image of await this.deps.store.imagesOf(record.dbid)) {
      if (image.category !== 'cover') found[image.category] ??= image;
    }
    const coverKey = keyOfCoverUrl(fieldText(record.metadata, 'coverurl') ?? '');
    const cover = coverKey === null ? null : await this.deps.store.meta(coverKey);
    if (cover) found.cover = cover;
    return found;
  }
}
