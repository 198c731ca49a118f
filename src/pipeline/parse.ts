import { isPlainObject } from '../domain/plain-object';
import { AppError } from '../errors';

// Stage 1: turn the HTTP request (query string, JSON or form body) into raw fields plus
// the credential carriers. Pure: no Koa, no I/O.

/** The bytes of the secret a request carries (header bytes are latin1 as they came off the wire). */
export interface Credential {
  /** null: a secret that is not text (a number, a list, ...), given but never matching. */
  bytes: Buffer | null;
}

export interface ParseOptions {
  /** docs/configuration.md `limits.maxFields`: more fields in one submission is a 400. */
  maxFields: number;
}

export interface RawRequest {
  method: string;
  /** Parsed query string; repeated keys arrive as arrays. */
  query: Readonly<Record<string, string | string[] | undefined>>;
  /** Parsed body for POST and PATCH (JSON or form), undefined for GET/HEAD/DELETE. */
  body?: unknown;
  /** Form bodies are read like query strings (docs/decisions.md): repeated keys are an error. */
  bodyIsForm?: boolean;
  /** The body as text, for a form-encoded body that is really JSON (`curl -d '{...}'`). */
  rawBody?: string;
  /** Value of X-SVC-Client-Auth, else of X-WNP-Client-Auth ('' when absent). */
  authHeader: string;
}

export interface ParsedSubmission {
  fields: Record<string, unknown>;
  credential: Credential | null;
}

export function parseSubmission(request: RawRequest, options: ParseOptions): ParsedSubmission {
  const query = singleValuedQuery(request.query);
  let fields: Record<string, unknown>;
  if (carriesBody(request.method)) {
    const jsonInForm = request.bodyIsForm ? jsonObjectIn(request.rawBody) : undefined;
    if (jsonInForm) fields = jsonInForm;
    else if (!isPlainObject(request.body)) throw new AppError('BODY_NOT_OBJECT');
    else fields = request.bodyIsForm ? singleValuedForm(request.body) : request.body;
  } else {
    fields = query;
  }
  // Before any per-field work: a 1 MB body of tiny fields would otherwise cost a warning each.
  const fieldCount = Object.keys(fields).length;
  if (fieldCount > options.maxFields) {
    throw new AppError('TOO_MANY_FIELDS', `Too many fields (${fieldCount}, limit ${options.maxFields})`);
  }
  return { fields, credential: pickCredential(request, fields, query) };
}

/**
 * Precedence (docs/decisions.md): a non-empty auth header decides alone; otherwise the body
 * field `secret` (POST, PATCH); otherwise the query parameter `secret` (any method).
 */
function pickCredential(request: RawRequest, fields: Record<string, unknown>, query: Record<string, string>): Credential | null {
  if (request.authHeader !== '') return { bytes: Buffer.from(request.authHeader, 'latin1') };
  if (carriesBody(request.method) && Object.hasOwn(fields, 'secret')) {
    const value = fields.secret;
    // A non-string secret can never match; it still counts as "given", so the answer is "Invalid secret".
    // Never serialized: a secret nested thousands of levels deep would overflow the stack.
    if (value !== '' && value !== null && value !== undefined) {
      return { bytes: typeof value === 'string' ? Buffer.from(value, 'utf8') : null };
    }
  }
  if (Object.hasOwn(query, 'secret') && query.secret !== '') {
    return { bytes: Buffer.from(query.secret, 'utf8') };
  }
  return null;
}

/** The methods whose fields come in the body (a PATCH corrects a record: pipeline/edit-track.ts). */
export function carriesBody(method: string): boolean {
  return method === 'POST' || method === 'PATCH';
}

function singleValuedQuery(query: RawRequest['query']): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    if (Array.isArray(value)) throw new AppError('INVALID_PARAMETERS', `Repeated query parameter '${shortName(key)}'`);
    if (value !== undefined) result[key] = value;
  }
  return result;
}

function singleValuedForm(body: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(body)) {
    if (Array.isArray(value)) throw new AppError('INVALID_PARAMETERS', `Repeated form parameter '${shortName(key)}'`);
  }
  return body;
}

/**
 * `curl -d '{...}'` labels JSON as form-encoded (docs/decisions.md): a form body that parses as a
 * JSON object is read as JSON. Anything else stays a form.
 */
function jsonObjectIn(rawBody: string | undefined): Record<string, unknown> | undefined {
  const text = rawBody?.trim();
  if (!text?.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text, dropProtoKeys);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `__proto__` keys are removed fields; JSON.parse would make them own properties named so. */
function dropProtoKeys(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value;
}

export function shortName(key: string): string {
  return key.length > 64 ? key.slice(0, 64) + '…' : key;
}

/** The credential of a request that carries no submission (DELETE /v1/history/<dbid>): same precedence. */
export function requestCredential(request: RawRequest): Credential | null {
  const query = singleValuedQuery(request.query);
  return pickCredential(request, query, query);
}

/** The credential of a request whose POST body is JSON with a `secret` field (docs/song-requests.md). */
export function requestCredentialWithBody(request: RawRequest): Credential | null {
  const query = singleValuedQuery(request.query);
  return pickCredential(request, isPlainObject(request.body) ? request.body : {}, query);
}
