import { deadlineSignal, sleep, type Deadline } from '../signals';
import { errorMessage } from '../errors';
import type { Limiter } from './rate-limit';

// The one outbound HTTP wrapper of svc (docs/architecture.md): User-Agent, a timeout per request combined
// with the enrichment signal, the host's rate limiter, 429/503 + Retry-After with backoff,
// JSON parsing with a size cap, and every failure wrapped in an UpstreamError naming the service.

interface UpstreamErrorOptions {
  status?: number;
  /** The wait a 429/503 asked for (its Retry-After), when it named one. */
  retryAfterMs?: number;
  transient: boolean;
  noAnswer?: boolean;
  cause?: unknown;
}

/** A failure of an outside service. `transient` answers are never cached. */
export class UpstreamError extends Error {
  readonly service: string;
  readonly status: number | undefined;
  /** The wait a 429/503 asked for (Retry-After); undefined when it named none. */
  readonly retryAfterMs: number | undefined;
  readonly transient: boolean;
  /** The service did not answer at all: a timeout, a refused or cut connection. */
  readonly noAnswer: boolean;

  constructor(service: string, message: string, options: UpstreamErrorOptions) {
    super(`${service}: ${message}`, { cause: options.cause });
    this.name = 'UpstreamError';
    this.service = service;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.transient = options.transient;
    this.noAnswer = options.noAnswer ?? false;
  }
}

export interface ServiceClientOptions {
  service: string;
  userAgent: string;
  timeoutMs: number;
  limiter?: Limiter;
  /** Tries for one request when the service answers 429 or 503. */
  maxAttempts?: number;
  /** Backoff when a 429/503 carries no Retry-After: base * 2^(attempt-1). */
  backoffBaseMs?: number;
  /** Values (API keys) that must never appear in an error message or a log. */
  secrets?: readonly string[];
}

export type JsonAnswer = { found: true; body: unknown } | { found: false };
export type RedirectAnswer = { found: true; location: string } | { found: false };

export interface RequestOptions {
  signal: AbortSignal;
  /** Form-encoded POST body (e.g. AcoustID fingerprints, too long for a URL). */
  form?: URLSearchParams;
  /** A multipart/form-data POST body (a file: ACRCloud's and AudD's samples); fetch sets its boundary. */
  multipart?: FormData;
}

/** An answer whose body is still to be read, under the limit of its request. */
interface Exchange {
  response: Response;
  deadline: Deadline;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;
const MAX_RETRY_AFTER_MS = 60_000;

export class ServiceClient {
  private readonly maxAttempts: number;
  private readonly backoffBaseMs: number;

  constructor(private readonly options: ServiceClientOptions) {
    this.maxAttempts = options.maxAttempts ?? 3;
    this.backoffBaseMs = options.backoffBaseMs ?? 1000;
  }

  /** GET (or POST a form or multipart body) and parse JSON. 404 is an answer ("not found"), not an error. */
  async json(url: string, options: RequestOptions): Promise<JsonAnswer> {
    const { response, deadline } = await this.send(url, options, 'follow');
    try {
      if (response.status === 404) {
        await discard(response);
        return { found: false };
      }
      if (response.status !== 200) {
        await discard(response);
        throw this.error(url, `HTTP ${response.status}`, { status: response.status, transient: response.status >= 500 || response.status === 429 });
      }
      // The per-request limit covers the body too: it is disposed only once the body is read.
      const text = await this.readText(url, response);
      try {
        return { found: true, body: JSON.parse(text) as unknown };
      } catch (cause) {
        throw this.error(url, 'malformed JSON in answer', { transient: true, cause });
      }
    } finally {
      deadline.dispose();
    }
  }

  /** Asks for a resource that answers with a redirect and returns where it points, without following it. */
  async redirect(url: string, options: RequestOptions): Promise<RedirectAnswer> {
    const { response, deadline } = await this.send(url, options, 'manual');
    deadline.dispose();
    await discard(response);
    if (response.status === 404) return { found: false };
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      return { found: true, location: new URL(location, url).toString() };
    }
    throw this.error(url, `expected a redirect, got HTTP ${response.status}`, { status: response.status, transient: response.status >= 500 });
  }

  private async send(url: string, options: RequestOptions, redirect: 'follow' | 'manual'): Promise<Exchange> {
    for (let attempt = 1; ; attempt += 1) {
      if (this.options.limiter) await this.options.limiter.take(options.signal);
      const exchange = await this.fetchOnce(url, options, redirect);
      const { response } = exchange;
      if (response.status !== 429 && response.status !== 503) return exchange;
      exchange.deadline.dispose();
      await discard(response);
      const askedMs = retryAfterMs(response.headers.get('retry-after'));
      const delayMs = askedMs ?? this.backoffBaseMs * 2 ** (attempt - 1);
      // The service asked everyone to slow down, not only this request.
      this.options.limiter?.pauseFor(delayMs);
      if (attempt >= this.maxAttempts || delayMs > MAX_RETRY_AFTER_MS) {
        const asked = askedMs === undefined ? {} : { retryAfterMs: askedMs };
        throw this.error(url, `HTTP ${response.status} after ${attempt} attempt(s)`, { status: response.status, transient: true, ...asked });
      }
      if (!this.options.limiter) await sleep(delayMs, options.signal);
    }
  }

  private async fetchOnce(url: string, options: RequestOptions, redirect: 'follow' | 'manual'): Promise<Exchange> {
    options.signal.throwIfAborted();
    const deadline = deadlineSignal(this.options.timeoutMs, [options.signal]);
    const { signal } = deadline;
    const headers: Record<string, string> = { 'User-Agent': this.options.userAgent, Accept: 'application/json' };
    try {
      const response = await fetch(url, {
        method: options.form || options.multipart ? 'POST' : 'GET',
        headers: options.form ? { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' } : headers,
        body: options.form?.toString() ?? options.multipart,
        redirect,
        signal,
      });
      return { response, deadline };
    } catch (cause) {
      deadline.dispose();
      if (options.signal.aborted) throw this.error(url, 'cancelled (enrichment deadline)', { transient: true, cause });
      if (signal.aborted) throw this.error(url, `no answer within ${this.options.timeoutMs} ms`, { transient: true, noAnswer: true, cause });
      throw this.error(url, `request failed: ${errorMessage(causeOf(cause))}`, { transient: true, noAnswer: true, cause });
    }
  }

  private async readText(url: string, response: Response): Promise<string> {
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > MAX_BODY_BYTES) {
      await discard(response);
      throw this.error(url, `answer too large (${declared} bytes)`, { transient: true });
    }
    if (!response.body) return '';
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        size += chunk.byteLength;
        if (size > MAX_BODY_BYTES) throw this.error(url, `answer larger than ${MAX_BODY_BYTES} bytes`, { transient: true });
        chunks.push(chunk);
      }
    } catch (cause) {
      if (cause instanceof UpstreamError) throw cause;
      throw this.error(url, `answer cut off: ${errorMessage(cause)}`, { transient: true, noAnswer: true, cause });
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  private error(url: string, message: string, options: UpstreamErrorOptions): UpstreamError {
    return new UpstreamError(this.options.service, `${message} (${this.describe(url)})`, options);
  }

  /** The URL as it may appear in a log: path only, API keys replaced. */
  private describe(url: string): string {
    let text: string;
    try {
      text = new URL(url).pathname;
    } catch {
      text = '(invalid URL)';
    }
    const secrets = new Set((this.options.secrets ?? []).filter((secret) => secret !== ''));
    return text
      .split('/')
      .map((segment) => (secrets.has(decodeURIComponent(segment)) ? '[key]' : segment))
      .join('/');
  }
}

/** Retry-After as seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // Nothing to do: the connection is dropped either way.
  }
}

function causeOf(error: unknown): unknown {
  // undici wraps the socket error ("ECONNREFUSED") in a TypeError("fetch failed").
  return error instanceof Error && error.cause !== undefined ? error.cause : error;
}
