import type { IncomingMessage } from 'node:http';
import { clientAddress, type ProxyMatcher } from '../../domain/trusted-proxies';
import type { AppMiddleware } from '../context';

// `ctx.ip` is the real client behind a trusted proxy (docs/running.md "Behind a proxy"), so every
// per-address rule keyed on it (the fair queue of expensive answers, cover downloads, SSE
// replays) treats two listeners behind one nginx as two clients. Koa's own `proxy` setting
// believes any sender and takes the left-most address, which the client writes itself.

/**
 * The real client of a request: behind a trusted proxy the address its forwarding headers name,
 * else the peer's own (what Koa's `ctx.ip` is without this middleware). Shared with the
 * /v1/events fast path (server/fast-paths/events-fast-path.ts), which never builds a Koa context.
 */
export function requestClient(request: IncomingMessage, trusted: ProxyMatcher): string {
  const peer = request.socket.remoteAddress ?? '';
  if (!trusted(peer)) return peer;
  return clientAddress(peer, { xForwardedFor: request.headers['x-forwarded-for'], forwarded: request.headers.forwarded }, trusted);
}

export function realClientAddress(trusted: ProxyMatcher): AppMiddleware {
  return async function withClientAddress(ctx, next) {
    if (trusted(ctx.req.socket.remoteAddress ?? '')) ctx.request.ip = requestClient(ctx.req, trusted);
    await next();
  };
}
