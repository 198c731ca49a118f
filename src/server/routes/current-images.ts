import Router from '@koa/router';
import { etagOf, matchesEtag } from '../../domain/etag';
import { TRANSPARENT_PNG_BASE64 } from '../../domain/image';
import type { ImageCategory } from '../../domain/track';
import type { NowPlaying } from '../../domain/current-track';
import type { ChannelViews } from '../streams/channel-views';
import type { ImageStore } from '../../store/images';
import type { AppContext, AppState } from '../context';
import { withCoverForNoThumb, type CurrentImages } from '../read-models/current-images';
import type { SharedBlobs } from '../streams/stream-reply';
import { sendImage } from './cover';

// GET /cover.png and /artist{thumb,banner,logo,fanart}.png, What's Now Playing's names
// (docs/chat-bots-and-obs.md "OBS image sources"): the current track's image with its real
// Content-Type whatever the ".png" says, or a 1x1 transparent PNG, never a 404 (an OBS source
// shows a broken image for that). `no-cache` with the image's ETag: a source that revalidates
// gets a 304 until the image changes.

export const CURRENT_IMAGE_PATHS: Readonly<Record<string, ImageCategory>> = {
  '/cover.png': 'cover',
  '/artistthumb.png': 'thumbnail',
  '/artistbanner.png': 'banner',
  '/artistlogo.png': 'logo',
  '/artistfanart.png': 'fanart',
};

const TRANSPARENT_PNG = Buffer.from(TRANSPARENT_PNG_BASE64, 'base64');
const TRANSPARENT_ETAG = etagOf(TRANSPARENT_PNG);
const REVALIDATE = 'no-cache';

export interface CurrentImageDeps {
  nowPlaying: NowPlaying;
  /** `?channel=` (docs/channels.md "Now playing per channel"); without it the images are `nowPlaying`'s. */
  channels?: ChannelViews;
  current: CurrentImages;
  store: Pick<ImageStore, 'use'>;
  blobs: SharedBlobs;
  /** `wsstream.coverForNoThumbs`: /artistthumb.png shows the cover when the artist has no thumbnail. */
  coverForNoThumbs: boolean;
}

export function currentImageRoutes(deps: CurrentImageDeps): Router<AppState> {
  const router = new Router<AppState>();
  for (const [path, category] of Object.entries(CURRENT_IMAGE_PATHS)) {
    router.get(path, async (ctx) => {
      const record = (deps.channels ? deps.channels.choose(ctx.query.channel) : deps.nowPlaying).current();
      const known = record ? withCoverForNoThumb(await deps.current.of(record), deps.coverForNoThumbs)[category] : undefined;
      if (known && matchesEtag(ctx.get('If-None-Match'), `"${known.key}"`)) {
        notModified(ctx, `"${known.key}"`);
        return;
      }
      // Marks the image as used, and finds out whether it was evicted since.
      const image = known ? await deps.store.use(known.key) : null;
      if (!image || !(await sendImage(ctx, image, deps.blobs, REVALIDATE))) sendTransparent(ctx);
    });
  }
  return router;
}

function notModified(ctx: AppContext, etag: string): void {
  ctx.set('ETag', etag);
  ctx.set('Cache-Control', REVALIDATE);
  ctx.status = 304;
}

function sendTransparent(ctx: AppContext): void {
  if (matchesEtag(ctx.get('If-None-Match'), TRANSPARENT_ETAG)) {
    notModified(ctx, TRANSPARENT_ETAG);
    return;
  }
  ctx.set('ETag', TRANSPARENT_ETAG);
  ctx.set('Cache-Control', REVALIDATE);
  ctx.type = 'image/png';
  ctx.body = TRANSPARENT_PNG;
}
