// The HTTP that source clients and radio automation speak to an Icecast 2.4 server, read and
// answered as Icecast 2.4.4 does (xiph/Icecast-Server src/connection.c, src/admin.c,
// src/client.c; the answers below were checked against a running icecast2 2.4.4), and as
// libshout's client expects (xiph/Icecast-libshout src/proto_http.c). Pure: no I/O.

export interface RequestHead {
  method: string;
  /** The path without the query string, as sent. */
  path: string;
  /** The raw query string (without "?"), '' when there is none. */
  query: string;
  /** Header names in lower case; a repeated header keeps its first value. */
  headers: ReadonlyMap<string, string>;
}

export const MAX_HEAD_BYTES = 8192;

/** Where the head ends (the index of the first body byte), or -1 while it has not. */
export function endOfHead(data: Buffer): number {
  const crlf = data.indexOf('\r\n\r\n', 0, 'latin1');
  const lf = data.indexOf('\n\n', 0, 'latin1');
  if (crlf === -1) return lf === -1 ? -1 : lf + 2;
  return lf !== -1 && lf < crlf ? lf + 2 : crlf + 4;
}

/** The request line and headers, or null for something that is not an HTTP request. */
export function parseRequestHead(head: Buffer): RequestHead | null {
  const lines = head.toString('latin1').split(/\r?\n/);
  const match = /^([A-Z]{1,16}) (\S{1,4096}) HTTP\/1\.[01]$/.exec(lines[0] ?? '');
  if (!match) return null;
  const target = match[2] ?? '';
  const queryAt = target.indexOf('?');
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return null;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return {
    method: match[1] ?? '',
    path: queryAt === -1 ? target : target.slice(0, queryAt),
    query: queryAt === -1 ? '' : target.slice(queryAt + 1),
    headers,
  };
}

/**
 * A request a browser sent (docs/security.md "Icecast sources"): a browser adds `Origin`, a
 * `Referer`, `Sec-Fetch-Site` (with `-Mode` and `-Dest`) or, on a navigation to a plain-http
 * address it does not trust, `Upgrade-Insecure-Requests` to what a page makes it send (an
 * `<img>`, a form, fetch, a redirect). DJ software and curl send none of them. `Sec-Fetch-Mode`
 * alone is what Node's fetch() sends; a browser never sends it without `Sec-Fetch-Site`.
 */
export function isFromBrowser(head: RequestHead): boolean {
  for (const name of head.headers.keys()) {
    if (name === 'origin' || name === 'referer' || name === 'upgrade-insecure-requests') return true;
    if (name.startsWith('sec-fetch-') && name !== 'sec-fetch-mode') return true;
  }
  return false;
}

const MAX_MOUNT_LENGTH = 256;

/**
 * One spelling per mount: `%XX` decoded, repeated and trailing slashes dropped, `.` segments
 * removed; null for a mount that is not one (`..`, control characters, a backslash, not UTF-8,
 * longer than 256 characters). `/live.ogg/`, `//live.ogg` and `/%6Cive.ogg` are `/live.ogg`.
 */
export function normalizeMount(path: string): string | null {
  if (!path.startsWith('/')) return null;
  let decoded: string;
  try {
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(percentDecode(path.replaceAll('+', '%2B')));
  } catch {
    return null;
  }
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\u0000-\u001f\u007f-\u009f\\\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(decoded)) return null;
  const segments = decoded.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) return null;
  const mount = `/${segments.join('/')}`;
  return mount.length > MAX_MOUNT_LENGTH ? null : mount;
}

/**
 * Query parameters as bytes: `%XX` and `+` decoded, the text decoded later with the request's
 * charset. A repeated parameter keeps its first value.
 */
export function queryBytes(query: string): Map<string, Buffer> {
  const result = new Map<string, Buffer>();
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = percentDecode(equals === -1 ? pair : pair.slice(0, equals)).toString('utf8');
    if (!result.has(name)) result.set(name, percentDecode(equals === -1 ? '' : pair.slice(equals + 1)));
  }
  return result;
}

function percentDecode(text: string): Buffer {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    const hex = text.slice(index + 1, index + 3);
    if (char === '%' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      index += 2;
    } else if (char === '+') {
      bytes.push(0x20);
    } else {
      bytes.push(...Buffer.from(char ?? '', 'utf8'));
    }
  }
  return Buffer.from(bytes);
}

/**
 * Text of a query value. With `charset=` it is decoded with that charset (Icecast's updinfo
 * parameter); without, as UTF-8 when the bytes are UTF-8, else as Latin-1 (what Icecast assumes
 * for a mount with no charset). Null: a charset this machine cannot decode.
 */
export function decodeText(bytes: Buffer, charset: string | undefined): string | null {
  if (charset !== undefined && charset !== '') {
    try {
      return new TextDecoder(charset).decode(bytes);
    } catch {
      return null;
    }
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

/** `song` is "Artist - Title": split at the first " - "; without one it is all title. */
export function splitSong(song: string): { artist?: string; title: string } {
  const at = song.indexOf(' - ');
  if (at === -1) return { title: song };
  return { artist: song.slice(0, at), title: song.slice(at + 3) };
}

// Answers. Icecast 2.4 answers HTTP/1.0 and closes (libshout reconnects after its challenge).

const NO_CACHE = 'Cache-Control: no-cache, no-store\r\nExpires: Mon, 26 Jul 1997 05:00:00 GMT\r\nPragma: no-cache\r\n';

function answer(statusLine: string, contentType: string, body: string, extraHeaders = ''): string {
  return (
    `HTTP/1.0 ${statusLine}\r\nServer: svc\r\nConnection: Close\r\nContent-Type: ${contentType}\r\n${extraHeaders}${NO_CACHE}` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** The answer to a source or admin request without the right password. */
export function authenticationRequired(): string {
  return answer(
    '401 Authentication Required',
    'text/plain; charset=utf-8',
    'You need to authenticate\r\n',
    'WWW-Authenticate: Basic realm="Icecast2 Server"\r\n',
  );
}

/** A request from a browser: never served on this port. */
export function browserRefused(): string {
  return answer('403 Forbidden', 'text/plain; charset=utf-8', 'Browsers may not use this port');
}

/** An address whose next password attempt is further away than svc holds a connection. */
export function tooManyAttempts(retryAfterSeconds: number): string {
  return answer('429 Too Many Requests', 'text/plain; charset=utf-8', 'Too many failed authentications, retry later', `Retry-After: ${retryAfterSeconds}\r\n`);
}

/** A second source on a mount that has one. */
export function mountInUse(): string {
  return answer('403 Forbidden', 'text/plain; charset=utf-8', 'Mountpoint in use');
}

/** Icecast's client_send_400 page. */
export function badRequest(message: string): string {
  return answer(
    '400 Bad Request',
    'text/html; charset=utf-8',
    `<html><head><title>Error 400</title></head><body><b>400 - ${escapeXml(message)}</b></body></html>\r\n`,
  );
}

export function notFound(message: string): string {
  return answer(
    '404 File Not Found',
    'text/html; charset=utf-8',
    `<html><head><title>Error 404</title></head><body><b>404 - ${escapeXml(message)}</b></body></html>\r\n`,
  );
}

/** The store is down (a failure of svc, not of the request). */
export function serviceUnavailable(message: string): string {
  return answer('503 Service Unavailable', 'text/plain; charset=utf-8', message);
}

/** `Expect: 100-continue`, then the go-ahead to stream. */
export const CONTINUE = 'HTTP/1.1 100 Continue\r\nContent-Length: 0\r\n\r\n';
export const SOURCE_ACCEPTED = 'HTTP/1.0 200 OK\r\n\r\n';

/** /admin/metadata's XML: `<return>1</return>` on success. */
export function adminXml(message: string, ok: boolean): string {
  const body = `<?xml version="1.0"?>\n<iceresponse><message>${escapeXml(message)}</message><return>${ok ? 1 : 0}</return></iceresponse>\n`;
  return answer('200 OK', 'text/xml; charset=utf-8', body);
}

/** /admin.cgi's page (Icecast's html_success, src/admin.c). */
export function adminHtml(message: string): string {
  return answer(
    '200 OK',
    'text/html; charset=utf-8',
    `<html><head><title>Admin request successful</title></head><body><p>${escapeXml(message)}</p></body></html>`,
  );
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
