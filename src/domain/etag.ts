import { createHash } from 'node:crypto';

/** A strong ETag for a body: its SHA-256, base64url, cut to 27 characters (162 bits). */
export function etagOf(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}
