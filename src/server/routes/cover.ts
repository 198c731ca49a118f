import Router from '@koa/router';
import { AppError } from '../../errors';
import { isImageKey } from '../../domain/image';
import type { ImageStore, StoredImage } from '../../store/images';
import type { AppContext, AppState } from '../context';
import { matchesEtag } from '../etag';
import type { QueueBudget } from '../queue-budget';
import { SharedBlobs, streamReply } from '../stream-reply';

// GET /cover/<key> (docs/decisions.md): the stored bytes with their sniffed Content-Type. The key is
// the SHA-256 of the bytes, so the ETag is the key itself and the answer never changes.

export const IMMUTABLE = 'public, max-age=31536000, immutable';

/** One in-memory copy per image being served, shared by /cover/<key> and the current-image routes. */
export function imageBlobs(store: Pick<ImageStore, 'get'>, budget: QueueBudget): SharedBlobs {
  return new SharedBlobs(async (key) => (await store.get(key))?.bytes ?? null, budget);
}

export function coverRoutes(store: Pick<ImageStore, 'use'>, blobs: SharedBlobs): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/cover/:key', async (ctx) => {
    const key = ctx.params.key ?? '';
    if (!isImageKey(key)) throw new AppError('NOT_FOUND', 'No image with this key');
    const etag = `"${key}"`;
    // Content addressing: whoever holds this ETag holds these bytes, stored or not any more.
    if (matchesEtag(ctx.get('If-None-Match'), etag)) {
      ctx.set('ETag', etag);
      ctx.set('Cache-Control', IMMUTABLE);
      ctx.status = 304;
      return;
    }
    const image = await store.use(key);
    if (!image) throw new AppError('NOT_FOUND', 'No image with this key');
    sendImage(ctx, image, blobs, IMMUTABLE);
  });

  return router;
}

/** Answers with a stored image, streamed as the reader takes it. */
export function sendImage(ctx: AppContext, image: StoredImage, blobs: SharedBlobs, cacheControl: string): void {
  ctx.set('ETag', `"${image.key}"`);
  ctx.set('Cache-Control', cacheControl);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Security-Policy', "default-src 'none'");
  ctx.type = image.mimeType;
  ctx.length = image.size;
  ctx.status = 200;
  // The body goes out chunk by chunk as the reader takes it (stream-reply.ts), not as one
  // 10 MiB buffer per request; Koa only sends what is set above.
  ctx.respond = false;
  const response = ctx.res;
  if (ctx.method === 'HEAD') {
    response.end();
    return;
  }
  streamReply(response, () => blobs.acquire(image.key, image.size)).catch(() => response.destroy());
}
