import { errorMessage } from '../errors';
import { sleep } from '../signals';
import { VERSION } from '../version';
import { randomUUID } from 'node:crypto';
import { CliError, EXIT, exitCodeForStatus, type ExitCode } from './exit-codes';

// HTTP client to a running svc: base URL, auth header, per-request timeout, and every failure
// turned into a CliError with the right exit code. Uses the global fetch (Node 20).

const AUTH_HEADER = 'X-SVC-Client-Auth';
/** Sent on every request and WebSocket handshake, so a server's log names the client. */
export const USER_AGENT = `svc/${VERSION}`;

export interface ClientSettings {
  /** Base URL, always ending in "/" so that a path prefix (a reverse proxy) is kept. */
  baseUrl: URL;
  /** Shared secret; sent only in the auth header, and only where it is needed. */
  secret: string;
  /** Applies to each request separately. */
  timeoutMs: number;
  /** Where these settings came from, named when the server cannot be reached: the config file, or where none was found. */
  configSource?: string;
}

export interface Answer {
  status: number;
  /** The body parsed as JSON. */
  json: unknown;
  /** The body as it came. */
  text: string;
}

export interface Download {
  bytes: Buffer;
}

export class SvcClient {
  constructor(readonly settings: ClientSettings) {}

  /** `path` is relative to the base URL, e.g. `v1/last`. */
  endpoint(path: string): URL {
    return new URL(path, this.settings.baseUrl);
  }

  /** The same endpoint with ws: or wss:. */
  wsEndpoint(path: string): URL {
    const url = this.endpoint(path);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    return url;
  }

  /** `withSecret`: the few reads that need the secret (GET /v1/outputs names targets). */
  getJson(path: string, withSecret = false): Promise<Answer> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (withSecret && this.settings.secret !== '') headers[AUTH_HEADER] = this.settings.secret;
    return this.requestJson(this.endpoint(path), { method: 'GET', headers });
  }

  postJson(path: string, body: unknown): Promise<Answer> {
    return this.sendJson('POST', path, body);
  }

  /** A correction of a stored record (PATCH /v1/history/<dbid>). */
  patchJson(path: string, body: unknown): Promise<Answer> {
    return this.sendJson('PATCH', path, body);
  }

  /** A JSON body with the secret. */
  private sendJson(method: 'POST' | 'PATCH', path: string, body: unknown): Promise<Answer> {
    const headers: Record<string, string> = { Accept: 'application/json', 'Content-Type': 'application/json' };
    if (this.settings.secret !== '') headers[AUTH_HEADER] = this.settings.secret;
    return this.requestJson(this.endpoint(path), { method, headers, body: JSON.stringify(body) });
  }

  /** DELETE with the secret (the song-request queue's writes). */
  deleteJson(path: string): Promise<Answer> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.settings.secret !== '') headers[AUTH_HEADER] = this.settings.secret;
    return this.requestJson(this.endpoint(path), { method: 'DELETE', headers });
  }

  /**
   * POSTs a submission that may be retried (docs/limits-and-load.md "Idempotency and retries"): one
   * Idempotency-Key for all attempts, so a retry never stores the play twice. Retries after
   * 502, 503, 504 and connection failures, with growing pauses (a 503's Retry-After if longer),
   * for as long as `timeoutMs` allows in all. `onRetry` hears of each failure that is tried again.
   */
  async postJsonOnce(path: string, body: unknown, onRetry?: (error: CliError, giveUpAt: number) => void): Promise<Answer> {
    const headers: Record<string, string> = { Accept: 'application/json', 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() };
    if (this.settings.secret !== '') headers[AUTH_HEADER] = this.settings.secret;
    const init = { method: 'POST', headers, body: JSON.stringify(body) };
    const giveUpAt = Date.now() + this.settings.timeoutMs;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.requestJson(this.endpoint(path), init, Math.max(1, giveUpAt - Date.now()));
      } catch (error) {
        if (!(error instanceof RetryableError)) throw error;
        const pauseMs = Math.max(backoffMs(attempt), error.retryAfterMs);
        if (Date.now() + pauseMs >= giveUpAt) throw error;
        onRetry?.(error, giveUpAt);
        await sleep(pauseMs);
      }
    }
  }

  /**
   * GETs a long answer with the secret, to be read as it streams: `timeoutMs` bounds the wait for
   * the headers only (a report's checks run before them), never the body.
   */
  async openStream(path: string): Promise<Response> {
    return this.streamed('GET', path, {});
  }

  /**
   * POSTs JSON with the secret and hands back the answer to be read as it streams (NDJSON):
   * `timeoutMs` bounds the wait for the headers only, never the body.
   */
  async postStream(path: string, body: unknown): Promise<Response> {
    return this.streamed('POST', path, { 'Content-Type': 'application/json', Accept: 'application/x-ndjson' }, JSON.stringify(body));
  }

  /** One request whose answer is read as it streams: `timeoutMs` bounds the wait for the headers only. */
  private async streamed(method: 'GET' | 'POST', path: string, extra: Record<string, string>, body?: string): Promise<Response> {
    const url = this.endpoint(path);
    const headers: Record<string, string> = { 'User-Agent': USER_AGENT, ...extra };
    if (this.settings.secret !== '') headers[AUTH_HEADER] = this.settings.secret;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.settings.timeoutMs);
    let response: Response;
    try {
      response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }), signal: controller.signal, redirect: 'manual' });
    } catch (error) {
      throw unreachable(url, error, controller.signal, this.settings);
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok) throw statusError(url, response, await response.text().catch(() => ''));
    return response;
  }

  /** GETs bytes from a URL on the same server (an image announced on the stream). */
  async download(url: URL): Promise<Download> {
    if (url.origin !== this.settings.baseUrl.origin) {
      throw new CliError(`refusing to download ${url.href}: not on ${this.settings.baseUrl.origin}`, EXIT.SERVER_ERROR);
    }
    const { response, signal } = await this.send(url, { method: 'GET' });
    const bytes = await readBody(url, () => response.arrayBuffer(), signal, this.settings);
    // An announced image can be evicted from the store before it is fetched.
    if (response.status === 404) throw new CliError(`${url.href}: not found (no longer stored on the server)`, EXIT.SERVER_ERROR);
    if (!response.ok) throw statusError(url, response, Buffer.from(bytes).toString('utf8'));
    return { bytes: Buffer.from(bytes) };
  }

  private async requestJson(url: URL, init: RequestInit, timeoutMs = this.settings.timeoutMs): Promise<Answer> {
    const { response, signal } = await this.send(url, init, timeoutMs);
    const text = await readBody(url, () => response.text(), signal, this.settings);
    if (!response.ok) throw statusError(url, response, text);
    try {
      return { status: response.status, json: JSON.parse(text), text };
    } catch {
      throw new CliError(`unexpected answer from ${url.href}: not JSON (is this an svc server?)`, EXIT.SERVER_ERROR);
    }
  }

  private async send(url: URL, init: RequestInit, timeoutMs = this.settings.timeoutMs): Promise<{ response: Response; signal: AbortSignal }> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      // Redirects are not followed: the auth header would go along to wherever they point.
      const headers = new Headers(init.headers);
      headers.set('User-Agent', USER_AGENT);
      return { response: await fetch(url, { ...init, headers, signal, redirect: 'manual' }), signal };
    } catch (error) {
      throw unreachable(url, error, signal, this.settings);
    }
  }
}

async function readBody<T>(url: URL, read: () => Promise<T>, signal: AbortSignal, settings: ClientSettings): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw unreachable(url, error, signal, settings);
  }
}

/** The server's own `{"error": "..."}` message; undefined when the body is not one (another server). */
function svcErrorText(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null && 'error' in parsed && typeof parsed.error === 'string') return parsed.error;
  } catch {
    // Not our JSON error record.
  }
  return undefined;
}

/** A failure worth another attempt with the same Idempotency-Key: 502, 503, 504, or no connection. */
class RetryableError extends CliError {
  constructor(
    message: string,
    exitCode: ExitCode,
    readonly retryAfterMs = 0,
  ) {
    super(message, exitCode);
  }
}

const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** 250 ms, 500 ms, 1 s, then 2 s between attempts. */
function backoffMs(attempt: number): number {
  return Math.min(2000, 250 * 2 ** attempt);
}

function statusError(url: URL, response: Response, body: string): CliError {
  const error = describeStatus(url, response, body);
  if (!RETRYABLE_STATUSES.has(response.status)) return error;
  const retryAfterSeconds = Number(response.headers.get('retry-after'));
  return new RetryableError(error.message, error.exitCode, Number.isFinite(retryAfterSeconds) ? retryAfterSeconds * 1000 : 0);
}

/** A refusal the server says is its own setting (no secret configured there): the client's settings are not the fix. */
function serverSide(message: string): boolean {
  return /the server has none/.test(message);
}

function describeStatus(url: URL, response: Response, body: string): CliError {
  const { status } = response;
  const code = exitCodeForStatus(status);
  const location = response.headers.get('location');
  const svcMessage = svcErrorText(body);
  const message =
    status >= 300 && status < 400 && location ? `redirected to ${location}; use that address as --url` : (svcMessage ?? (response.statusText || 'no message'));
  const what =
    code === EXIT.AUTH_REFUSED
      ? `authentication refused (${status}): ${message}${serverSide(message) ? '' : ' (check --secret, SVC_SECRET or client.secret)'}`
      : code === EXIT.INPUT_REJECTED
        ? `input rejected (${status}): ${message}`
        : status === 408 || status >= 500
          ? `server error (${status}): ${message}`
          : `unexpected answer from ${url.href} (${status}): ${message}${svcMessage === undefined ? ' (is this an svc server?)' : ''}`;
  return new CliError(what, code);
}

/** Connection failures and timeouts: the server could not be reached (exit 4). */
function unreachable(url: URL, error: unknown, signal: AbortSignal | null, settings: Pick<ClientSettings, 'timeoutMs' | 'configSource'>): CliError {
  if (signal?.aborted) {
    return new CliError(`no answer from ${url.origin} within ${formatSeconds(settings.timeoutMs)} (see --timeout)`, EXIT.UNREACHABLE);
  }
  const reason = describeNetworkError(error);
  if (reason === 'bad port') {
    // The Fetch standard blocks some ports (e.g. 1, 9, 6000, 10080) whatever the server does.
    return new CliError(`cannot use ${url.origin}: port ${url.port} is one that HTTP clients refuse to connect to; run svc serve on another port`, EXIT.USAGE);
  }
  // Which config gave this address: a wrong folder or a missing file is the usual cause.
  const source = settings.configSource ? `; ${settings.configSource}` : '';
  return new RetryableError(`cannot reach ${url.origin}: ${reason} (is \`svc serve\` running there?${source})`, EXIT.UNREACHABLE);
}

const NETWORK_ERRORS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
};

export function describeNetworkError(error: unknown): string {
  // fetch wraps the socket error: TypeError("fetch failed") with the real one as `cause`.
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (code && NETWORK_ERRORS[code]) return NETWORK_ERRORS[code];
    if (current.cause === undefined) return current.message;
    current = current.cause;
  }
  return errorMessage(current);
}

export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
