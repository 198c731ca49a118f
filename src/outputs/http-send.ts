import http from 'node:http';
import https from 'node:https';
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
  /** The answer's headers (a scrobbler reads its rate-limit headers); empty when none came. */
  headers: http.IncomingHttpHeaders;
}

export interface HttpRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A FormData body is sent as multipart/form-data (Discord's file upload). */
  body?: string | FormData;
}

// node:http rather than fetch: a delivery is one small request, and fetch's web streams cost
// several times the CPU of a plain request on the loop that also answers submissions. Kept-alive
// sockets spare a handshake per track; an idle one is closed before the usual 5 s server
// keep-alive timeout, so a reused socket is rarely one the target has just closed.
const agentOptions = { keepAlive: true, maxFreeSockets: 4, timeout: 4000 };
const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };

export async function sendHttp(url: string, request: HttpRequest, signal: AbortSignal): Promise<HttpAnswer> {
  try {
    const { bytes, contentType } = await encodeBody(request.body);
    const headers: Record<string, string> = { 'user-agent': `svc/${VERSION}`, ...(contentType ? { 'content-type': contentType } : {}), ...request.headers };
    if (bytes) headers['content-length'] = String(bytes.length);
    const response = await exchange(new URL(url), request.method ?? 'GET', headers, bytes, signal);
    return { delivery: deliveryOfStatus(response.status, retryAfterMs(response.retryAfter)), body: response.body, headers: response.headers };
  } catch (error) {
    const status = (error as { status?: unknown }).status;
    return { delivery: { outcome: 'retry', ...(typeof status === 'number' ? { status } : {}), error: networkError(error, signal) }, body: '', headers: {} };
  }
}

async function encodeBody(body: HttpRequest['body']): Promise<{ bytes?: Buffer; contentType?: string }> {
  if (body === undefined) return {};
  if (typeof body === 'string') return { bytes: Buffer.from(body, 'utf8') };
  // The platform's own multipart encoder: its boundary and part headers, as fetch would send.
  const encoded = new Response(body);
  return { bytes: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type') ?? undefined };
}

interface RawAnswer {
  status: number;
  retryAfter: string | null;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** One request; never follows a redirect. A failure mid-answer carries the status it had. */
function exchange(url: URL, method: string, headers: Record<string, string>, bytes: Buffer | undefined, signal: AbortSignal): Promise<RawAnswer> {
  const agent = url.protocol === 'https:' ? agents['https:'] : agents['http:'];
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = send(url, { method, headers, agent, signal }, (res) => {
      const status = res.statusCode ?? 0;
      const retryAfter = typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : null;
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => resolve({ status, retryAfter, body: Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8'), headers: res.headers });
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= MAX_ANSWER_BYTES) {
          res.destroy();
          done();
        }
      });
      res.on('end', done);
      res.on('error', (error) => reject(Object.assign(error, { status })));
      res.on('close', () => {
        if (!res.complete) reject(Object.assign(new Error('connection closed'), { code: 'ECONNABORTED', status }));
      });
    });
    req.on('error', reject);
    req.end(bytes);
  });
}

/** "connection refused", "timed out after 10 s": the cause without the address or URL. */
function networkError(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return (signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError' ? 'timed out after 10 s' : 'cancelled';
  const code = (error as { code?: unknown } | undefined)?.code;
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host not found (DNS)',
    ETIMEDOUT: 'connection timed out',
    EHOSTUNREACH: 'host unreachable',
    ECONNABORTED: 'connection closed',
    EPIPE: 'connection closed',
  };
  return (typeof code === 'string' && known[code]) || 'network error';
}
