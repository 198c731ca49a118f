import Router from '@koa/router';
import { AppError } from '../../errors';
import { isImageKey } from '../../domain/image';
import type { ImageStore } from '../../store/images';
import type { AppState } from '../context';
import { matchesEtag } from '../etag';
import type { QueueBudget } from '../queue-budget';
import { SharedBlobs, streamReply } from '../stream-reply';

// GET /cover/<key> (decisions.md): the stored bytes with their sniffed Content-Type. The key is
// the SHA-256 of the bytes, so the ETag is the key itself and the answer never changes.

const IMMUTABLE = 'public, max-age=31536000, immutable';

export function coverRoutes(store: Pick<ImageStore, 'use' | 'get'>, budget: QueueBudget): Router<AppState> {
  const router = new Router<AppState>();
  const blobs = new SharedBlobs(async (key) => (await store.get(key))?.bytes ?? null, budget);

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
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', IMMUTABLE);
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
    streamReply(response, () => blobs.acquire(key, image.size)).catch(() => response.destroy());
  });

  return router;
}
