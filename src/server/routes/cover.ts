import Router from '@koa/router';
import { AppError } from '../../errors';
import { isImageKey } from '../../domain/image';
import type { ImageStore, StoredImage } from '../../store/images';
import type { MemoryCachedImages } from '../../store/image-memory-cache';
import type { AppContext, AppState } from '../context';
import type { QueueBudget } from '../guards/queue-budget';
import type { WorkPool } from '../guards/work-pool';
import { ONE_WRITE_MAX_BYTES, SharedBlobs, endWithShared, streamReply } from '../streams/stream-reply';
import { matchesEtag } from '../../domain/etag';

// GET /cover/<key> (docs/decisions.md): the stored bytes with their sniffed Content-Type. The key is
// the SHA-256 of the bytes, so the ETag is the key itself and the answer never changes.

export const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * One in-memory copy per image being served, shared by /cover/<key> and the current-image routes.
 * An image the memory cache holds is answered from the cache's own copy.
 */
export function imageBlobs(store: Pick<ImageStore, 'get'> & { memory?: MemoryCachedImages }, budget: QueueBudget, pool: WorkPool): SharedBlobs {
  const memory = store.memory;
  // A store load (up to 10 MiB out of the database) is expensive work: it waits its turn with the
  // history pages, fairly between clients (docs/limits-and-load.md "Expensive requests").
  return new SharedBlobs(
    async (key) => (await store.get(key))?.bytes ?? null,
    budget,
    memory ? (key) => memory.cached(key)?.bytes : undefined,
    (client, load) => pool.run(client, load),
  );
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
    if (!(await sendImage(ctx, image, blobs, IMMUTABLE))) throw new AppError('NOT_FOUND', 'No image with this key');
  });

  return router;
}

/**
 * Answers with a stored image, streamed as the reader takes it; false (nothing sent) when the
 * store lost its bytes in the meantime. Throws a 503 when the pool refuses its load.
 */
export async function sendImage(ctx: AppContext, image: StoredImage, blobs: SharedBlobs, cacheControl: string): Promise<boolean> {
  const inMemory = image.size <= ONE_WRITE_MAX_BYTES ? blobs.inMemory(image.key) : undefined;
  const fromMemory = inMemory?.length === image.size ? inMemory : undefined;
  // The bytes are had before any header goes out, so a refused load can still be a 503.
  const lease = fromMemory || ctx.method === 'HEAD' ? null : await blobs.acquire(image.key, image.size, ctx.ip);
  if (!fromMemory && ctx.method !== 'HEAD' && !lease) return false;
  ctx.set('ETag', `"${image.key}"`);
  ctx.set('Cache-Control', cacheControl);
  ctx.set('Content-Security-Policy', "default-src 'none'");
  ctx.type = image.mimeType;
  ctx.length = image.size;
  ctx.status = 200;
  // Koa only sends what is set above. An image in the memory cache, up to 1 MiB, goes out as the
  // cache's own bytes in one write (no copy, nothing to count: the cache's bound holds them); any
  // other chunk by chunk as the reader takes it (stream-reply.ts), not as one 10 MiB buffer per request.
  ctx.respond = false;
  const response = ctx.res;
  if (ctx.method === 'HEAD') {
    response.end();
    return true;
  }
  if (fromMemory) endWithShared(response, fromMemory);
  else if (lease) streamReply(response, lease).catch(() => response.destroy());
  return true;
}
