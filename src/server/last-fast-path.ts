import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log';
import type { NowPlaying } from '../store/now-playing';
import type { CorsPolicy } from './middleware/cors';
import { logAccess } from './middleware/request-log';
import { lastResponse } from './routes/last';

// GET and HEAD /v1/last answered before Koa. Overlays poll this every second; building a Koa
// context and running the middleware chain cost about as much as the answer itself
// (bench/http-last.bench.js, profiled). Same status, headers, body and access-log line as the
// Koa route, which still answers every other form of the path (and 405/OPTIONS).

export interface FastPathDeps {
  nowPlaying: NowPlaying;
  cors: CorsPolicy;
  logger: Logger;
  nextRequestId: () => string;
}

/** Returns true when it answered the request. */
export function createLastFastPath(deps: FastPathDeps): (request: IncomingMessage, response: ServerResponse) => boolean {
  return function answerLast(request, response) {
    if (request.url !== '/v1/last' || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
    const started = process.hrtime.bigint();
    const requestId = deps.nextRequestId();
    const origin = request.headers.origin;
    const answer = lastResponse(deps.nowPlaying.snapshot(), request.headers['if-none-match'] ?? '');
    const headers: Record<string, string | number> = { 'X-Request-Id': requestId, ...deps.cors(typeof origin === 'string' ? origin : ''), ...answer.headers };
    if (answer.body !== undefined) headers['Content-Length'] = Buffer.byteLength(answer.body);
    response.writeHead(answer.status, headers);
    response.end(request.method === 'HEAD' ? undefined : answer.body);
    logAccess(deps.logger, request.method, request.url, answer.status, started, requestId);
    return true;
  };
}
