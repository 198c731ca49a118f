import type { AppMiddleware } from '../context';
import { CREDENTIAL_HEADERS } from '../guards/credentials';

// CORS per `corsOrigins` (docs/decisions.md), including the auth headers in preflight,
// so a browser overlay on another origin can read /v1/last and submit.

const ALLOWED_HEADERS = ['Content-Type', ...CREDENTIAL_HEADERS, 'If-None-Match', 'Last-Event-ID'].join(', ');
const ALLOWED_METHODS = 'GET, HEAD, POST, OPTIONS';

/** The CORS headers of a response, decided once per request from its Origin. Pure. */
export type CorsPolicy = (origin: string) => Record<string, string>;

export function corsPolicy(origins: readonly string[]): CorsPolicy {
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  return function corsHeadersFor(origin) {
    const headers: Record<string, string> = anyOrigin ? {} : { Vary: 'Origin' };
    if (origin && (anyOrigin || allowed.has(origin))) {
      headers['Access-Control-Allow-Origin'] = anyOrigin ? '*' : origin;
      headers['Access-Control-Expose-Headers'] = 'ETag, X-Request-Id';
    }
    return headers;
  };
}

export function cors(policy: CorsPolicy): AppMiddleware {
  return async function corsHeaders(ctx, next) {
    for (const [name, value] of Object.entries(policy(ctx.get('Origin')))) {
      if (name === 'Vary') ctx.vary(value);
      else ctx.set(name, value);
    }
    if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
      ctx.set('Access-Control-Allow-Methods', ALLOWED_METHODS);
      ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    await next();
  };
}
