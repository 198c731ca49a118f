import { clientAddress, type ProxyMatcher } from '../../domain/trusted-proxies';
import type { AppMiddleware } from '../context';

// `ctx.ip` is the real client behind a trusted proxy (docs/running.md "Behind a proxy"), so every
// per-address rule keyed on it (the fair queue of expensive answers, cover downloads, SSE
// replays) treats two listeners behind one nginx as two clients. Koa's own `proxy` setting
// believes any sender and takes the left-most address, which the client writes itself.

export function realClientAddress(trusted: ProxyMatcher): AppMiddleware {
  return async function withClientAddress(ctx, next) {
    const peer = ctx.req.socket.remoteAddress ?? '';
    if (trusted(peer)) {
      ctx.request.ip = clientAddress(peer, { xForwardedFor: ctx.req.headers['x-forwarded-for'], forwarded: ctx.req.headers.forwarded }, trusted);
    }
    await next();
  };
}
