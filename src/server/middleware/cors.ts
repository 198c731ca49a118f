import type { AppMiddleware } from '../context';

// CORS per `corsOrigins` (decisions.md), including the auth headers in preflight,
// so a browser overlay on another origin can read /v1/last and submit.

const ALLOWED_HEADERS = 'Content-Type, X-SVC-Client-Auth, X-WNP-Client-Auth, If-None-Match';
const ALLOWED_METHODS = 'GET, HEAD, POST, OPTIONS';

export function cors(origins: readonly string[]): AppMiddleware {
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  return async function corsHeaders(ctx, next) {
    const origin = ctx.get('Origin');
    if (!anyOrigin) ctx.vary('Origin');
    if (origin && (anyOrigin || allowed.has(origin))) {
      ctx.set('Access-Control-Allow-Origin', anyOrigin ? '*' : origin);
      ctx.set('Access-Control-Expose-Headers', 'ETag, X-Request-Id');
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
