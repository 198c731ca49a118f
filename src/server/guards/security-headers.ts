// The one home of the headers every answer of svc carries, whoever writes it: the Koa chain
// (middleware/guards.ts), the three fast paths (last-fast-path.ts, events-fast-path.ts,
// cover-fast-path.ts) and the answers written straight to a socket (raw-response.ts). docs/security.md names them.

/** Browsers must not guess a type for our JSON, images or pages. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'X-Content-Type-Options': 'nosniff',
});

/** The same headers as raw HTTP/1.1 header lines, each ending in CRLF. */
export const SECURITY_HEADER_LINES = Object.entries(SECURITY_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');
