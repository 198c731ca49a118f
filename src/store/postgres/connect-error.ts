// What `svc serve` says when the PostgreSQL database cannot be used at start (docs/running.md
// "PostgreSQL"): the cause in words and the next step, instead of a bare `ECONNREFUSED`. Pure.

const NETWORK_CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'nothing accepts connections there (is PostgreSQL running, and on that port?)',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be looked up',
  ETIMEDOUT: 'no answer (a firewall, or the wrong host?)',
  EHOSTUNREACH: 'host unreachable',
  ECONNRESET: 'the server closed the connection (is it PostgreSQL, and does pg_hba.conf let this user in?)',
};

/** PostgreSQL's SQLSTATE codes a wrong URL most often meets. */
const SQLSTATE_CAUSES: Readonly<Record<string, string>> = {
  '28P01': 'wrong password for that user',
  '28000': 'that user may not connect (pg_hba.conf)',
  '3D000': 'no such database (create it first: createdb, or CREATE DATABASE)',
  '42501': 'the user lacks a privilege the tables need',
  '53300': 'too many connections (lower database.poolSize, or put PgBouncer in front)',
};

/**
 * PostgreSQL answers a user that does not exist with 28000 too, and the words
 * `role "NAME" does not exist` (its auth code, src/backend/libpq/auth.c): that is no pg_hba.conf matter.
 */
const MISSING_ROLE = 'no such user on that server (create it: createuser NAME, or CREATE ROLE NAME LOGIN; or fix the user in the URL)';

function isMissingRole(code: string, message: string): boolean {
  return code === '28000' && /^role ".*" does not exist$/.test(message);
}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Node gives an AggregateError when every address of a host (IPv4 and IPv6) refused.
  const inner = (error as { errors?: unknown }).errors;
  return Array.isArray(inner) ? codeOf(inner[0]) : undefined;
}

/** The cause in words, with the driver's own message kept when nothing better is known. */
export function describeDatabaseError(error: unknown): string {
  const code = codeOf(error);
  const message = error instanceof Error && error.message !== '' ? error.message : String(error);
  const cause = code === undefined ? undefined : (NETWORK_CAUSES[code] ?? (isMissingRole(code, message) ? MISSING_ROLE : SQLSTATE_CAUSES[code]));
  if (cause === undefined) return message;
  return code !== undefined && code in SQLSTATE_CAUSES ? `${cause}: ${message}` : `${cause} (${code})`;
}
