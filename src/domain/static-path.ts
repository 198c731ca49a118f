// Which file under `staticDir` a request path names (docs/first-hour.md "Your own files"). Pure:
// the route checks the answer against the real file system (symlinks) afterwards.

/**
 * The relative file path for the part of the URL path after `/static/`, or null when it may not
 * be served: a segment that is `..` or `.` (also percent-encoded), a backslash, a NUL or another
 * control character, an empty segment (`a//b`), a hidden file (`.env`), a malformed escape, or
 * nothing at all (a folder: no listings).
 */
export function staticRelativePath(encoded: string): string | null {
  if (encoded === '' || encoded.endsWith('/')) return null;
  const segments: string[] = [];
  for (const raw of encoded.split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return null;
    }
    // eslint-disable-next-line no-control-regex -- control characters are what is refused
    if (segment === '' || segment.startsWith('.') || /[\\/\u0000-\u001f\u007f]/.test(segment)) return null;
    segments.push(segment);
  }
  return segments.join('/');
}

const STATIC_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
};

/** The Content-Type for a file name; unknown kinds are bytes (never sniffed: nosniff). */
export function staticContentType(name: string): string {
  const dot = name.lastIndexOf('.');
  return (dot === -1 ? undefined : STATIC_TYPES[name.slice(dot).toLowerCase()]) ?? 'application/octet-stream';
}
