import { AppError } from '../../errors';
import type { AppMiddleware } from '../context';
import { isBrowserNavigation, isPrivateRead, isWriteRequest, unknownHostMessage, writeOriginCheck, type hostCheck } from '../guards/request-guards';
import type { ClientStreams } from '../guards/client-streams';
import type { FreshReads } from '../guards/fresh-reads';
import { SECURITY_HEADERS } from '../guards/security-headers';

// Koa faces of the checks in request-guards.ts (docs/decisions.md "Hostile clients and browsers").

/** 421 for a Host a loopback listener does not answer to (DNS rebinding). */
export function refuseUnknownHosts(hostAllowed: ReturnType<typeof hostCheck>): AppMiddleware {
  return async function knownHostOnly(ctx, next) {
    const host = ctx.get('Host');
    if (hostAllowed && !hostAllowed(host)) throw new AppError('UNKNOWN_HOST', unknownHostMessage(host));
    await next();
  };
}

/** 503 STALE_READ_REFUSED for a read that asked for fresh state from an instance cut off from its database (guards/fresh-reads.ts). */
export function refuseStaleReads(reads: FreshReads): AppMiddleware {
  return async function freshOnly(ctx, next) {
    if (reads.refuses(ctx.method, ctx.url, ctx.headers)) throw new AppError('STALE_READ_REFUSED', undefined, { headers: { 'Retry-After': '1' } });
    await next();
  };
}

/** 429 TOO_MANY_STREAMS for a stream the per-client cap refused before Koa (guards/client-streams.ts). */
export function refuseStreamsOverCap(streams: ClientStreams): AppMiddleware {
  return async function streamsPerClient(ctx, next) {
    if (streams.refused(ctx.req)) throw new AppError('TOO_MANY_STREAMS', undefined, { headers: { 'Retry-After': '1' } });
    await next();
  };
}

/**
 * 403 for a write sent by a page on another origin, with or without a secret: a web page must
 * never submit to a DJ's svc. Applies to every write route, present and future (isWriteRequest),
 * and to the reads of listeners' data (isPrivateRead).
 */
export function refuseCrossSiteWrites(writeOrigins: readonly string[]): AppMiddleware {
  const writeAllowed = writeOriginCheck(writeOrigins);
  return async function sameOriginWritesOnly(ctx, next) {
    const privateRead = ctx.method !== 'OPTIONS' && isPrivateRead(ctx.path);
    if (privateRead || isWriteRequest(ctx.method, ctx.path)) {
      const origin = ctx.get('Origin');
      const secFetchSite = ctx.get('Sec-Fetch-Site');
      const allowed = writeAllowed({
        origin: ctx.headers.origin === undefined ? undefined : origin,
        secFetchSite: secFetchSite === '' ? undefined : secFetchSite,
        ownOrigin: `${ctx.protocol}://${ctx.get('Host')}`,
      });
      if (!allowed) throw new AppError('CROSS_SITE_REFUSED');
      if (isBrowserNavigation(ctx.get('Sec-Fetch-Mode'), ctx.get('Sec-Fetch-Dest'))) {
        if (privateRead) throw new AppError('CROSS_SITE_REFUSED', 'A browser navigation never downloads a report: use svc report, or fetch() with the secret');
        throw new AppError('CROSS_SITE_REFUSED', 'A browser navigation never writes: submit from DJ software, a script or fetch()');
      }
    }
    await next();
  };
}

/** The security headers of every answer (security-headers.ts); the error handler writes them again on a clean slate. */
export const securityHeaders: AppMiddleware = async function securityHeaders(ctx, next) {
  ctx.set(SECURITY_HEADERS);
  await next();
};
