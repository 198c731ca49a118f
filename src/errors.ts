// Every error svc can answer with, in one catalogue (style: fastify lib/errors.js).
// `expose` says whether the message may reach a client; 5xx never expose internals.

export interface ErrorSpec {
  status: number;
  message: string;
  expose: boolean;
}

export const ERRORS = {
  INVALID_JSON: { status: 400, message: 'Invalid JSON in request body', expose: true },
  BODY_NOT_OBJECT: { status: 400, message: 'Request body must be a JSON object', expose: true },
  INVALID_PARAMETERS: { status: 400, message: 'Invalid query parameters', expose: true },
  NO_IDENTIFYING_FIELD: {
    status: 400,
    message: 'A submission needs at least one of artist, title, isrc, musicbrainzrecordingid, or both fpcalcfingerprint and fpcalcduration',
    expose: true,
  },
  TOO_MANY_FIELDS: { status: 400, message: 'Too many fields', expose: true },
  INVALID_BODY_ENCODING: { status: 400, message: 'Invalid request body encoding', expose: true },
  MISSING_SECRET: { status: 403, message: 'Missing secret in request', expose: true },
  INVALID_SECRET: { status: 403, message: 'Invalid secret', expose: true },
  CROSS_SITE_REFUSED: { status: 403, message: 'Cross-site request refused', expose: true },
  // docs/song-requests.md: `requests.enabled` is false.
  REQUESTS_DISABLED: { status: 403, message: 'Requests are disabled', expose: true },
  NOT_FOUND: { status: 404, message: 'Not found', expose: true },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed', expose: true },
  // docs/limits-and-load.md "Idempotency and retries" (the IETF httpapi draft's 409 and 422).
  IDEMPOTENCY_KEY_IN_USE: { status: 409, message: 'A request with this Idempotency-Key is still being processed', expose: true },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: 'Idempotency-Key reused with a different request', expose: true },
  // docs/http-api.md "`PATCH /v1/history/<dbid>`: correct a record": plays of one channel never overlap (docs/play-log.md "Air times").
  PLAY_OVERLAP: { status: 422, message: 'The corrected play would overlap another play on its channel', expose: true },
  PROCESSING_TIMEOUT: { status: 408, message: 'Metadata processing timed out', expose: true },
  REQUEST_TIMEOUT: { status: 408, message: 'The request was not received in time', expose: true },
  // docs/song-requests.md: the queue holds at most 1000 requests.
  REQUEST_QUEUE_FULL: { status: 429, message: 'The request queue is full', expose: true },
  // docs/song-requests.md: one requester's waiting requests, and the queue's intake per minute, are bounded.
  REQUESTER_QUEUE_FULL: { status: 429, message: 'Too many requests from this requester are waiting', expose: true },
  // server/guards/client-streams.ts: limits.maxConnectionsPerAddress per client behind a trusted proxy.
  TOO_MANY_STREAMS: { status: 429, message: 'Too many streams open from this address, retry later', expose: true },
  REQUEST_RATE_EXCEEDED: { status: 429, message: 'Too many song requests this minute', expose: true },
  BODY_TOO_LARGE: { status: 413, message: 'Request body too large', expose: true },
  RECORD_TOO_LARGE: { status: 413, message: 'The record cannot fit in the record size limit', expose: true },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Unsupported content type', expose: true },
  MALFORMED_REQUEST: { status: 400, message: 'Malformed HTTP request', expose: true },
  EXPECTATION_FAILED: { status: 417, message: 'Unsupported Expect header (only 100-continue is understood)', expose: true },
  // The client closed its connection before its request body arrived: nobody reads this answer.
  REQUEST_ABORTED: { status: 400, message: 'Request aborted by the client', expose: true },
  UNKNOWN_HOST: { status: 421, message: 'Unknown host', expose: true },
  HEADERS_TOO_LARGE: { status: 431, message: 'Request line or headers too large', expose: true },
  UPGRADE_REQUIRED: { status: 426, message: 'This endpoint only accepts WebSocket connections', expose: true },
  // docs/security.md "Guessing the secret": an address whose next turn is over a minute away.
  TOO_MANY_FAILED_AUTHENTICATIONS: { status: 429, message: 'Too many failed authentications from this address, retry later', expose: true },
  INTERNAL: { status: 500, message: 'Internal server error', expose: false },
  // Exposed: the client may retry later, and the message names no internals.
  DATABASE_UNAVAILABLE: { status: 503, message: 'Database unavailable', expose: true },
  // Exposed: a fixed text, with Retry-After (server/guards/fresh-reads.ts; docs/several-instances.md "Fresh reads through nginx").
  STALE_READ_REFUSED: { status: 503, message: 'Not ready: this instance cannot reach its database, so its answer could be stale', expose: true },
  // Exposed: a fixed text, with Retry-After (docs/limits-and-load.md "Expensive requests").
  SERVER_BUSY: { status: 503, message: 'Server busy: too many expensive requests waiting, retry shortly', expose: true },
  // Exposed: a fixed text, with Retry-After (docs/limits-and-load.md "Connections").
  TOO_MANY_CONNECTIONS: { status: 503, message: 'Server busy: too many connections open, retry shortly', expose: true },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly expose: boolean;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message?: string, options: { headers?: Record<string, string>; cause?: unknown } = {}) {
    const spec: ErrorSpec = ERRORS[code];
    super(message ?? spec.message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = spec.status;
    this.expose = spec.expose;
    this.headers = options.headers ?? {};
  }
}

/** A start-up problem (port taken, database unusable, ...): one clear line for the user. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/** A mistake in the configuration (file, environment or flags): the user's to fix, like a usage error. */
export class ConfigError extends StartupError {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
