import { createHash } from 'node:crypto';

// ETags and conditional GETs for /v1/last, /cover/<key>, /v1/history, the text line, the current
// images and the pages. Pure.

/** A strong ETag for a body: its SHA-256, base64url, cut to 27 characters (162 bits). */
export function etagOf(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

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
