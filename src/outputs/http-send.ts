import { retryAfterMs } from '../enrich/http';
import { VERSION } from '../version';
import { deliveryOfStatus } from './backoff';
import type { Delivery } from './output';

// The outputs' one HTTP request: no redirects, the caller's signal (10 s and shutdown), and an
// answer turned into a Delivery. Errors name the cause, never the URL (it may hold a token).

export const HTTP_TIMEOUT_MS = 10_000;
/** What is read of an answer body at most (Discord's id, an error text). */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface HttpAnswer {
  delivery: Delivery;
  body: string;
}

export async function sendHttp(url: string, init: RequestInit, signal: AbortSignal): Promise<HttpAnswer> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal, headers: { 'user-agent': `svc/${VERSION}`, ...init.headers } });
  } catch (error) {
    return { delivery: { outcome: 'retry', error: networkError(error, signal) }, body: '' };
  }
  let body: string;
  try {
    body = await readLimited(response);
  } catch (error) {
    return { delivery: { outcome: 'retry', status: response.status, error: networkError(error, signal) }, body: '' };
  }
  return { delivery: deliveryOfStatus(response.status, retryAfterMs(response.headers.get('retry-after'))), body };
}

async function readLimited(response: Response): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= MAX_ANSWER_BYTES) break;
  }
  return Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8');
}

/** "connection refused", "timed out after 10 s": the cause without the address or URL. */
function networkError(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return (signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError' ? 'timed out after 10 s' : 'cancelled';
  // Duck-typed: undici's "fetch failed" carries the socket error as its cause, from another realm at times.
  const cause = (error as { cause?: unknown } | undefined)?.cause ?? error;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host not found (DNS)',
    ETIMEDOUT: 'connection timed out',
    EHOSTUNREACH: 'host unreachable',
    UND_ERR_SOCKET: 'connection closed',
  };
  return (typeof code === 'string' && known[code]) || 'network error';
}
