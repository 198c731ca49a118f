import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../log';
import type { ProxyMatcher } from '../../domain/trusted-proxies';
import { CREDENTIAL_HEADERS } from '../guards/credentials';
import type { CorsPolicy } from '../middleware/cors';
import { errorAnswer, logUnexpected } from '../middleware/errors';
import { requestClient } from '../middleware/client-address';
import { logAccess } from '../middleware/request-log';
import { STREAM_HEADERS, startingPoint } from '../routes/events';
import { SECURITY_HEADERS } from '../guards/security-headers';
import type { EventStream, OpenStream } from '../streams/sse/event-stream';
import { requestGone } from '../guards/work-pool';

// GET and HEAD /v1/events (docs/chat-bots-and-obs.md "Server-Sent Events") answered before Koa.
// A reader holds its stream open for hours, and through Koa the request's whole context lived as
// long (the context, its request and response objects, Koa's finish listener on the socket):
// more than half of what an idle reader cost (docs/limits-and-load.md "What one client costs").
// Here a stream holds only Node's request and response and the event stream's own reader. Same
// status, headers, error bodies and access-log line as the Koa route (routes/events.ts), which
// still answers every other form: another query parameter or a repeated `since`, a credential
// header (the failed-authentication throttle looks at those), another method (405, OPTIONS), an
// unknown Host (421).

export interface EventsFastPathDeps {
  stream: EventStream;
  cors: CorsPolicy;
  logger: Logger;
  nextRequestId: () => string;
  /** `trustProxy`: whose forwarding headers name the client, whose turn a replay takes. */
  trustedProxy: ProxyMatcher;
  /** A Host the listener does not answer to falls through to Koa, which answers 421. */
  hostAllowed?: ((hostHeader: string | undefined) => boolean) | null;
}

const PATH = '/v1/events';
const CREDENTIALS = CREDENTIAL_HEADERS.map((name) => name.toLowerCase());

/** The `since` of a request this path answers (undefined: none), or null when Koa should answer it. */
function sinceParameter(url: string): string | undefined | null {
  if (url === PATH) return undefined;
  if (!url.startsWith(`${PATH}?`) || url.includes('#')) return null;
  // Read as Koa reads a query (URLSearchParams): only `since`, at most once.
  const query = new URLSearchParams(url.slice(PATH.length + 1));
  let since: string | undefined;
  for (const [name, value] of query) {
    if (name !== 'since' || since !== undefined) return null;
    since = value;
  }
  return since;
}

/** Returns true when it took the request (it answers it, or its reader hung up meanwhile). */
export function createEventsFastPath(deps: EventsFastPathDeps): (request: IncomingMessage, response: ServerResponse) => boolean {
  /** The JSON error the Koa error middleware gives (middleware/errors.ts), on the same headers. */
  const answerError = (request: IncomingMessage, response: ServerResponse, headers: Record<string, string>, error: unknown, started: bigint) => {
    const requestId = headers['X-Request-Id'];
    const answer = errorAnswer(error);
    logUnexpected(deps.logger, requestId, answer, error);
    if (response.headersSent) {
      response.destroy();
    } else {
      const body = JSON.stringify(answer.body);
      response.writeHead(answer.status, {
        ...headers,
        ...SECURITY_HEADERS,
        ...answer.headers,
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
      });
      response.end(request.method === 'HEAD' ? undefined : body);
    }
    logAccess(deps.logger, request.method ?? 'GET', request.url ?? '', answer.status, started, requestId);
  };

  const openStream = (request: IncomingMessage, response: ServerResponse, headers: Record<string, string>, since: number | undefined, started: bigint) => {
    // Only a replay waits in the pool (src/server/streams/sse/event-stream.ts), so only then is the hang-up watched.
    const gone = since === undefined ? undefined : requestGone(response);
    const opened = (start: OpenStream) => {
      try {
        response.writeHead(200, { ...headers, ...STREAM_HEADERS });
        // No Nagle delay between an event and the next: each goes out as it is written.
        request.socket.setNoDelay(true);
        start(response);
        logAccess(deps.logger, request.method ?? 'GET', request.url ?? '', 200, started, headers['X-Request-Id']);
      } catch (error) {
        answerError(request, response, headers, error, started);
      }
    };
    const refused = (error: unknown) => {
      // The reader hung up while its replay waited for the pool: nobody to answer, nothing to log.
      if (gone?.aborted) return;
      answerError(request, response, headers, error, started);
    };
    // `requestClient` is the Koa route's `ctx.ip`: the real client behind a trusted proxy, whose
    // turn in the fair queue the replay takes (docs/several-instances.md "Resuming streams").
    deps.stream.open(since, requestClient(request, deps.trustedProxy), gone).then(opened, refused);
  };

  return function answerEvents(request, response) {
    const url = request.url ?? '';
    if (!url.startsWith(PATH) || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
    const sinceText = sinceParameter(url);
    if (sinceText === null || CREDENTIALS.some((name) => request.headers[name] !== undefined)) return false;
    if (deps.hostAllowed && !deps.hostAllowed(request.headers.host)) return false;
    const started = process.hrtime.bigint();
    const origin = request.headers.origin;
    // The headers of every answer, as the Koa chain sets them before the route runs.
    const headers: Record<string, string> = {
      'X-Request-Id': deps.nextRequestId(),
      ...SECURITY_HEADERS,
      ...deps.cors(typeof origin === 'string' ? origin : ''),
    };
    const lastEventId = request.headers['last-event-id'];
    let since: number | undefined;
    try {
      since = startingPoint(typeof lastEventId === 'string' ? lastEventId : '', sinceText);
    } catch (error) {
      answerError(request, response, headers, error, started);
      return true;
    }
    if (request.method === 'HEAD') {
      response.writeHead(200, { ...headers, ...STREAM_HEADERS });
      response.end();
      logAccess(deps.logger, 'HEAD', url, 200, started, headers['X-Request-Id']);
      return true;
    }
    openStream(request, response, headers, since, started);
    return true;
  };
}
