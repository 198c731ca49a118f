// The one reader of a request's credential headers (docs/decisions.md "Names"):
// X-SVC-Client-Auth, else What's Now Playing's X-WNP-Client-Auth. Every route, the idempotency
// check and the auth throttle read it here; CORS names the same two in its preflight answer.

/** The credential headers, in the order they are read. */
export const CREDENTIAL_HEADERS = ['X-SVC-Client-Auth', 'X-WNP-Client-Auth'] as const;

/** Anything that reads a request header by name ('' when absent), such as a Koa context. */
export interface HeaderReader {
  get(name: string): string;
}

/** The first credential header that is set, else ''. */
export function credentialHeader(request: HeaderReader): string {
  for (const name of CREDENTIAL_HEADERS) {
    const value = request.get(name);
    if (value !== '') return value;
  }
  return '';
}
