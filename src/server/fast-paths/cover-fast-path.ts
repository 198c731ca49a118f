import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../log';
import { isImageKey } from '../../domain/image';
import type { CachedImage, MemoryCachedImages } from '../../store/image-memory-cache';
import type { CorsPolicy } from '../middleware/cors';
import { logAccess } from '../middleware/request-log';
import { IMMUTABLE } from '../routes/cover';
import { ONE_WRITE_MAX_BYTES, endWithShared } from '../streams/stream-reply';
import { matchesEtag } from '../../domain/etag';
import { SECURITY_HEADERS } from '../guards/security-headers';

// GET and HEAD /cover/<key> answered before Koa when the image is in the memory cache
// (docs/several-instances.md "Covers from memory"). After a track change every overlay asks for
// the new cover at once, on the connection it already holds: 1,000 requests in one burst. Through
// Koa each one built a context, ran the middleware chain and streamed the shared copy in chunks
// (bench/instances.bench.js, profiled); here it costs a map lookup, headers prepared once per
// image, and one write of the shared bytes. A miss joins the cache's one store read for that key.
// Same status, headers, body and access-log line as the Koa route (routes/cover.ts), which still
// answers everything else: a key not in memory, an image over 1 MiB (streamed), a query string,
// another method, an unknown Host.

export interface CoverFastPathDeps {
  images: MemoryCachedImages;
  cors: CorsPolicy;
  logger: Logger;
  nextRequestId: () => string;
  hostAllowed?: ((hostHeader: string | undefined) => boolean) | null;
}

/** Hands a request to Koa, when the fast path learns only later that it cannot answer it. */
export type FallBack = (request: IncomingMessage, response: ServerResponse) => void;

const PREFIX = '/cover/';

interface Prepared {
  etag: string;
  headers: Readonly<Record<string, string | number>>;
}

/** Returns true when it answers the request (now or once the image is loaded). */
export function createCoverFastPath(deps: CoverFastPathDeps): (request: IncomingMessage, response: ServerResponse, fallBack: FallBack) => boolean {
  // The headers of each image, built once: keyed by its bytes, so they go when the image leaves memory.
  const prepared = new WeakMap<Buffer, Prepared>();
  const headersOf = (image: CachedImage): Prepared => {
    let entry = prepared.get(image.bytes);
    if (!entry) {
      const etag = `"${image.key}"`;
      entry = {
        etag,
        headers: {
          ETag: etag,
          'Cache-Control': IMMUTABLE,
          ...SECURITY_HEADERS,
          'Content-Security-Policy': "default-src 'none'",
          'Content-Type': image.mimeType,
          'Content-Length': image.size,
        },
      };
      prepared.set(image.bytes, entry);
    }
    return entry;
  };

  /** This path's own error boundary, since Koa's error middleware never sees it: logged, and the connection dropped. */
  const answer = (request: IncomingMessage, response: ServerResponse, image: CachedImage, started: bigint): void => {
    try {
      reply(request, response, image, started);
    } catch (error) {
      deps.logger.error(`GET ${request.url} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      response.destroy();
    }
  };

  const reply = (request: IncomingMessage, response: ServerResponse, image: CachedImage, started: bigint): void => {
    const requestId = deps.nextRequestId();
    const origin = request.headers.origin;
    const { etag, headers } = headersOf(image);
    const common = { 'X-Request-Id': requestId, ...deps.cors(typeof origin === 'string' ? origin : '') };
    if (matchesEtag(request.headers['if-none-match'] ?? '', etag)) {
      response.writeHead(304, { ...common, ...SECURITY_HEADERS, ETag: etag, 'Cache-Control': IMMUTABLE });
      response.end();
      logAccess(deps.logger, request.method ?? 'GET', request.url ?? '', 304, started, requestId);
      return;
    }
    response.writeHead(200, { ...common, ...headers });
    if (request.method === 'HEAD') response.end();
    else endWithShared(response, image.bytes);
    logAccess(deps.logger, request.method ?? 'GET', request.url ?? '', 200, started, requestId);
  };

  return function answerCover(request, response, fallBack) {
    const url = request.url ?? '';
    if (!deps.images.enabled || !url.startsWith(PREFIX) || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
    const key = url.slice(PREFIX.length);
    if (!isImageKey(key)) return false;
    if (deps.hostAllowed && !deps.hostAllowed(request.headers.host)) return false;
    const started = process.hrtime.bigint();
    const image = deps.images.cached(key);
    // An image over 1 MiB is streamed by the Koa route, chunk by chunk (stream-reply.ts).
    if (image && image.size > ONE_WRITE_MAX_BYTES) return false;
    if (image) {
      answer(request, response, image, started);
      return true;
    }
    // A new cover: every request of the burst waits for the same store read. Not found, not
    // kept in memory, or the store failing: Koa answers as it always did (404, streamed, 503).
    deps.images.load(key).then(
      (loaded) => {
        if (response.destroyed) return;
        if (loaded && loaded.size <= ONE_WRITE_MAX_BYTES) answer(request, response, loaded, started);
        else fallBack(request, response);
      },
      () => {
        if (!response.destroyed) fallBack(request, response);
      },
    );
    return true;
  };
}
