import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import type Router from '@koa/router';
import { AppError } from '../errors';
import type { Logger } from '../log';
import type { AppMiddleware, AppState } from './context';
import type { hostCheck } from './guards/request-guards';
import { cors, type CorsPolicy } from './middleware/cors';
import { handleErrors } from './middleware/errors';
import { securityHeaders, refuseCrossSiteWrites, refuseStaleReads, refuseStreamsOverCap, refuseUnknownHosts } from './middleware/guards';
import type { ClientStreams } from './guards/client-streams';
import type { FreshReads } from './guards/fresh-reads';
import { createRequestIds, logRequests } from './middleware/request-log';
import { realClientAddress } from './middleware/client-address';
import type { ProxyMatcher } from '../domain/trusted-proxies';

export interface AppDeps {
  logger: Logger;
  cors: CorsPolicy;
  routers: readonly Router<AppState>[];
  /** The Host check of a loopback listener (null: any Host). */
  hostAllowed?: ReturnType<typeof hostCheck>;
  /** Origins whose pages may write (docs/configuration.md `writeOrigins`); same origin always may. */
  writeOrigins?: readonly string[];
  /** Failed authentication throttled per address (middleware/auth-throttle.ts); none in unit tests of the app. */
  authThrottle?: AppMiddleware;
  /** Shared with the fast paths (/v1/last, /v1/events, /cover), so ids stay unique across all of them. */
  nextRequestId?: () => string;
  /** `trustProxy` (docs/running.md "Behind a proxy"): whose forwarding headers name the client. */
  trustedProxy?: ProxyMatcher;
  /** Reads that asked for fresh state, refused while the database is out of reach (guards/fresh-reads.ts). */
  freshReads?: FreshReads;
  /** Streams per client behind a trusted proxy (guards/client-streams.ts). */
  clientStreams?: ClientStreams;
}

/**
 * The server's request listener. Three requests bypass Koa: `GET`/`HEAD /v1/last` in its plain form
 * (server/fast-paths/last-fast-path.ts: overlays poll it every second, and the Koa chain cost as much as the
 * answer), `GET`/`HEAD /v1/events` with at most `?since=` (server/fast-paths/events-fast-path.ts: a reader
 * holds its stream for hours, and its Koa context lived as long) and `GET`/`HEAD /cover/<key>` of
 * an image in memory (server/fast-paths/cover-fast-path.ts: every overlay fetches a new cover at once). Each
 * has its own error boundary or falls back to Koa, and parity tests
 * (test/integration/status-last.test.ts, test/integration/screens/events-fast-path.test.ts,
 * test/integration/cover-fast-path.test.ts) hold their headers to the Koa routes': a header added
 * to the Koa chain must be added there too. Everything else goes through `createApp`.
 */
export function createRequestListener(
  app: Koa<AppState>,
  answerLastFast: (request: IncomingMessage, response: ServerResponse) => boolean,
  answerCoverFast: FastPath = () => false,
  answerEventsFast: (request: IncomingMessage, response: ServerResponse) => boolean = () => false,
): (request: IncomingMessage, response: ServerResponse) => void {
  const handleWithKoa = app.callback();
  const koa = (request: IncomingMessage, response: ServerResponse): void => void handleWithKoa(request, response);
  return function handleRequest(request, response) {
    if (!answerLastFast(request, response) && !answerEventsFast(request, response) && !answerCoverFast(request, response, koa)) koa(request, response);
  };
}

/** A path answered before Koa; `fallBack` hands the request to Koa after all. True when it took the request. */
export type FastPath = (request: IncomingMessage, response: ServerResponse, fallBack: (request: IncomingMessage, response: ServerResponse) => void) => boolean;

/** Builds the Koa app; never listens (start.ts does). Middleware order is the request's path. */
export function createApp(deps: AppDeps): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: false });
  app.silent = true;
  if (deps.trustedProxy) app.use(realClientAddress(deps.trustedProxy));
  app.use(logRequests(deps.logger, deps.nextRequestId ?? createRequestIds()));
  app.use(securityHeaders);
  app.use(handleErrors(deps.logger));
  app.use(refuseUnknownHosts(deps.hostAllowed ?? null));
  app.use(cors(deps.cors));
  if (deps.freshReads) app.use(refuseStaleReads(deps.freshReads));
  if (deps.clientStreams) app.use(refuseStreamsOverCap(deps.clientStreams));
  app.use(refuseCrossSiteWrites(deps.writeOrigins ?? []));
  if (deps.authThrottle) app.use(deps.authThrottle);
  for (const router of deps.routers) app.use(router.routes() as unknown as AppMiddleware);
  app.use(unmatched(deps.routers));
  return app;
}

/** JSON 404 for unknown paths; JSON 405 with `Allow` for a known path and a wrong method. */
function unmatched(routers: readonly Router<AppState>[]): AppMiddleware {
  return async function notFoundOrNotAllowed(ctx, next) {
    await next();
    if (ctx.body !== undefined || ctx.status !== 404) return;
    const allowed = new Set<string>();
    for (const router of routers) {
      for (const layer of router.match(ctx.path, ctx.method).path) {
        for (const method of layer.methods) allowed.add(method);
      }
    }
    if (allowed.size === 0) throw new AppError('NOT_FOUND', `Not found: ${ctx.path}`);
    allowed.add('OPTIONS');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', [...allowed].join(', '));
      ctx.status = 204;
      return;
    }
    throw new AppError('METHOD_NOT_ALLOWED', `Method ${ctx.method} not allowed on ${ctx.path}`, {
      headers: { Allow: [...allowed].join(', ') },
    });
  };
}
