// What an image is to svc, in one place: the formats it accepts (recognised by their first
// bytes, never by a file name or a Content-Type header, which a remote server chooses freely),
// the key that names it (the SHA-256 of its bytes), the `cover/<key>` reference that `coverurl`
// holds, and the per-image size limit. Pure.

export type ImageMimeType = 'image/jpeg' | 'image/png' | 'image/webp' | 'image/gif';

/** One image may not be larger than this, whatever the store's total budget. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/** Bytes needed to recognise every accepted format. */
export const SNIFF_BYTES = 12;

/** A 1x1 PNG whose one pixel is fully transparent (RGBA 0,0,0,0): what What's Now Playing sends for a missing image. */
export const TRANSPARENT_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR42mNgAAIAAAUAAen63NgAAAAASUVORK5CYII=';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const IMAGE_KEY = /^[0-9a-f]{64}$/;
const COVER_REFERENCE = /^cover\/([0-9a-f]{64})$/;

/** The MIME type the bytes start like, or null (too short, or not an accepted format). */
export function sniffImageType(bytes: Uint8Array): ImageMimeType | null {
  if (bytes.length < SNIFF_BYTES) return null;
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (PNG_SIGNATURE.every((byte, index) => bytes[index] === byte)) return 'image/png';
  if (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a') return 'image/gif';
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

/** An image key is the lower-case hex SHA-256 of the bytes; anything else could name a path. */
export function isImageKey(text: string): boolean {
  return IMAGE_KEY.test(text);
}

/** What `coverurl` says for a stored image: relative to the server's base URL (docs/decisions.md). */
export function coverUrlFor(key: string): string {
  return `cover/${key}`;
}

/** The key in one of our own `cover/<key>` references, or null for anything else. */
export function keyOfCoverUrl(url: string): string | null {
  return COVER_REFERENCE.exec(url)?.[1] ?? null;
}

function ascii(bytes: Uint8Array, start: number, end: number): string {
  return String.fromCharCode(...bytes.subarray(start, end));
}
