// Icecast's own credential carriers, read here only (docs/play-log.md "Listener sessions";
// docs/security.md "Icecast sources" for the source login and the title updates): `Authorization: Basic` and
// SHOUTcast's `?pass=`. Pure: no Koa, no sockets. The shared secret's own carriers (the
// credential headers, the body's `secret`, `?secret=`) are read in parse.ts.

/** The password of `Authorization: Basic` (any user name, as Icecast's source login), or null. */
export function basicPassword(authorization: string | undefined): string | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? null : decoded.slice(colon + 1);
}

/**
 * SHOUTcast v1's `GET /admin.cgi?mode=updinfo&pass=…` (Icecast's command_shoutcast_metadata):
 * `?pass=` when given, else the Basic password.
 */
export function adminPassword(pass: Buffer | undefined, authorization: string | undefined): string | null {
  return pass?.toString('utf8') ?? basicPassword(authorization);
}

/**
 * The Basic password of Icecast's listener callbacks, as latin1 bytes ('' when none). Icecast 2.4
 * sends `Authorization: Basic Og==` (an empty user and password) when the URL carries none: an
 * empty password is no secret given, not a wrong one.
 */
export function callbackBasicPassword(authorization: string): string {
  const basic = /^basic\s+(\S+)$/i.exec(authorization);
  const decoded = basic?.[1] === undefined ? '' : Buffer.from(basic[1], 'base64').toString('latin1');
  return decoded.slice(decoded.indexOf(':') + 1);
}
