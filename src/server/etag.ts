// Conditional GETs for /v1/last, /cover/<key>, /v1/history and the pages.

/**
 * RFC 9110 13.1.2 weak comparison. Koa's `ctx.fresh` is not used: it ignores If-None-Match
 * when the request says `Cache-Control: no-cache`, which fetch() adds to every conditional request.
 */
export function matchesEtag(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch === '') return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => opaque(tag) === opaque(etag));
}
