import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERRORS } from '../../errors';
import type { Logger } from '../../log';
import type { NowPlaying } from '../../domain/current-track';
import type { CorsPolicy } from '../middleware/cors';
import { logAccess } from '../middleware/request-log';
import { lastResponse, type LastResponse } from '../routes/last';
import { TEXT_PATHS, type TextAnswers } from '../routes/last-text';
import { SECURITY_HEADERS } from '../guards/security-headers';

// GET and HEAD /v1/last (and its plain-text forms /v1/last.txt and /index.txt, polled by chat
// bots and OBS text sources) answered before Koa. Overlays poll this every second; building a Koa
// context and running the middleware chain cost about as much as the answer itself
// (bench/http-last.bench.js, profiled). Same status, headers, body and access-log line as the
// Koa route, which still answers every other form of the path (and 405/OPTIONS).

export interface FastPathDeps {
  nowPlaying: NowPlaying;
  cors: CorsPolicy;
  logger: Logger;
  nextRequestId: () => string;
  /** A Host the listener does not answer to falls through to Koa, which answers 421. */
  hostAllowed?: ((hostHeader: string | undefined) => boolean) | null;
  /** The default line of the text forms (routes/last-text.ts). */
  text?: TextAnswers;
}

type Answer = (snapshot: ReturnType<NowPlaying['snapshot']>, ifNoneMatch: string) => LastResponse;

/** Returns true when it answered the request (an error included: it never falls through to Koa half-answered). */
export function createLastFastPath(deps: FastPathDeps): (request: IncomingMessage, response: ServerResponse) => boolean {
  const answers = new Map<string, Answer>([['/v1/last', lastResponse]]);
  const text = deps.text;
  if (text) for (const path of TEXT_PATHS) answers.set(path, (snapshot, ifNoneMatch) => text.byDefault(snapshot, ifNoneMatch));
  return function answerLast(request, response) {
    const answerFor = answers.get(request.url ?? '');
    if (!answerFor || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
    if (deps.hostAllowed && !deps.hostAllowed(request.headers.host)) return false;
    const started = process.hrtime.bigint();
    const requestId = deps.nextRequestId();
    try {
      const origin = request.headers.origin;
      const answer = answerFor(deps.nowPlaying.snapshot(), request.headers['if-none-match'] ?? '');
      const headers: Record<string, string | number> = {
        'X-Request-Id': requestId,
        ...SECURITY_HEADERS,
        ...deps.cors(typeof origin === 'string' ? origin : ''),
        ...answer.headers,
      };
      if (answer.bodyBytes !== undefined) headers['Content-Length'] = answer.bodyBytes;
      response.writeHead(answer.status, headers);
      response.end(request.method === 'HEAD' ? undefined : answer.body);
      logAccess(deps.logger, request.method, request.url ?? '', answer.status, started, requestId);
    } catch (error) {
      // This path's own error boundary, since Koa's error middleware never sees it: the same
      // JSON 500 as the Koa chain, and the cause in the log next to the request id.
      deps.logger.error(`GET ${request.url} failed (id=${requestId}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!response.headersSent) {
        const body = JSON.stringify({ error: ERRORS.INTERNAL.message });
        response.writeHead(ERRORS.INTERNAL.status, {
          'X-Request-Id': requestId,
          'Content-Type': 'application/json; charset=utf-8',
          ...SECURITY_HEADERS,
          'Content-Length': Buffer.byteLength(body),
        });
        response.end(request.method === 'HEAD' ? undefined : body);
      } else {
        response.destroy();
      }
      logAccess(deps.logger, request.method, request.url ?? '', ERRORS.INTERNAL.status, started, requestId);
    }
    return true;
  };
}
