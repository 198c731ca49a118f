import { isImageKey } from '../domain/image';

// How `svc watch-images --save DIR` names files: `<key>.<extension>`. Pure.

const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/jpeg': 'jpg',
  'image/jpg': 'jpg',
  'image/pjpeg': 'jpg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/bmp': 'bmp',
  'image/tiff': 'tiff',
  'image/svg+xml': 'svg',
  'image/x-icon': 'ico',
  'image/vnd.microsoft.icon': 'ico',
};

/** `image/jpeg; charset=binary` -> `jpg`; an unknown image type keeps a safe subtype, else `bin`. */
function extensionFor(mimeType: string): string {
  const type = (mimeType.split(';')[0] ?? '').trim().toLowerCase();
  const known = EXTENSIONS[type];
  if (known) return known;
  const subtype = /^image\/([a-z0-9]{1,10})$/.exec(type)?.[1];
  return subtype ?? 'bin';
}

/** `<key>.<ext>`, or null when the key is not a SHA-256 hex digest. */
export function imageFileName(key: string, mimeType: string): string | null {
  const normalized = key.toLowerCase();
  return isImageKey(normalized) ? `${normalized}.${extensionFor(mimeType)}` : null;
}
