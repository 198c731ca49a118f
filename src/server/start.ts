import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { serverUrl } from '../config/client-target';
import { StartupError } from '../errors';
import { createLogger, throttledLog, type Logger } from '../log';
import { sleep } from '../signals';
import { VERSION } from '../version';
import { createApp, createRequestListener } from './app';
import { createLastFastPath } from './fast-paths/last-fast-path';
import { createCoverFastPath } from './fast-paths/cover-fast-path';
import { createEventsFastPath } from './fast-paths/events-fast-path';
import { corsPolicy } from './middleware/cors';
import { hostCheck, unknownHostMessage } from './guards/request-guards';
import { trustedProxies, type ProxyMatcher } from '../domain/trusted-proxies';
import { createConnectionCaps } from './guards/connection-limits';
import { limitRequestsInFlight } from './guards/pipelining';
import { throttleFailedAuthentication } from './middleware/auth-throttle';
import { createRequestIds } from './middleware/request-log';
import { answerClientError, answerUnknownExpectation, endWithError } from './guards/raw-response';
import { CURRENT_IMAGE_PATHS, currentImageRoutes } from './routes/current-images';
import { freshReads, type FreshReads } from './guards/fresh-reads';
import { clientStreams, type ClientStreams } from './guards/client-streams';
import { coverRoutes } from './routes/cover';
import { eventRoutes } from './routes/events';
import { healthRoutes } from './routes/health';
import { metricsRoutes } from './routes/metrics';
import { routeLabel } from './metrics';
import type { MetricsPort } from '../metrics';
import { requestRoutes } from './routes/requests';
import { historyRoutes } from './routes/history';
import { ICECAST_LISTENERS_DOOR, ICECAST_LISTENERS_PATH, icecastListenerRoutes } from './routes/icecast-listeners';
import { outputRoutes } from './routes/outputs';
import { libraryRoutes } from './routes/library';
import { listenerRoutes } from './routes/listeners';
import { recountRoutes } from './routes/recount';
import { reportRoutes } from './routes/reports';
import { pageRoutes } from './routes/pages';
import { staticRoutes } from './routes/static-files';
import { TEXT_PATHS, textRoutes } from './routes/last-text';
import { v1Routes } from './routes/v1';
import { IMAGES_WS_PATH } from './streams/ws/hub';
import { FANART_STREAM_PATH, WSSTREAM_PATH } from './streams/ws/wsstream';
import { IDLE_HEAP_DEFAULTS, collectWhenIdle, type IdleHeapDecision, type IdleHeapOptions } from './guards/idle-heap';
import os from 'node:os';
import type { Options as MdnsSocketOptions } from 'multicast-dns';
import { advertiseOverMdns, type MdnsAdvertiser } from './mdns/advertise';
import { advertisedAddresses } from './mdns/answer';
import { channelParameter } from './streams/channel-views';
import { AppError } from '../errors';
import { createChannelStreams, type ChannelStreams } from './channel-streams';
import type { RouterPorts, ServerPorts, ServerSettings } from './ports';

// The HTTP server of the process: the Koa app and its routes, the three fast paths, the WebSocket
// and event streams, connection limits, listening and the shutdown of all of it. It is handed the
// ports of the composition root (src/app/start-app.ts, ports.ts): its settings and one port per
// router; it builds only what it owns (its streams, its middleware, its shutdown) and reads no config.

export interface ServerOptions {
  logger?: Logger;
  /** /v1/images/ws: tests use a short ping interval or a small per-client buffer. */
  ws?: {
    pingIntervalMs?: number;
    maxBufferedBytes?: number;
    subscribeWindowMs?: number;
    /** /wsartistfanartstream's repeating timer (setInterval): tests tick the slideshow by hand. */
    fanartEvery?: (tick: () => void, ms: number) => () => void;
  };
  /** The mDNS responder's socket and the interfaces it reads (tests: 127.0.0.1, multicast off). */
  mdns?: { socket?: MdnsSocketOptions; announce?: boolean; interfaces?: () => ReturnType<typeof os.networkInterfaces> };
  /** Giving back the young generation (src/server/guards/idle-heap.ts): tests use a short quiet time and watch its decisions. */
  idleHeap?: Partial<IdleHeapOptions> & { onDecision?: (decision: IdleHeapDecision) => void };
  /** The connection caps (src/server/guards/connection-limits.ts): tests set a short grace for a silent connection. */
  connections?: { silentGraceMs?: number };
}

export interface RunningServer {
  url: string;
  port: number;
  /** Stops accepting, closes every socket and waits (within the grace) for the answers and submissions in flight. */
  close(): Promise<void>;
}

export async function startServer(ports: ServerPorts, options: ServerOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  const { settings } = ports;
  // Checked before listening: a wrong staticDir stops start-up.
  const ownFiles = staticRoutes(settings.staticDir);
  const sockets = createChannelStreams(ports.streams, options, logger);
  // Set once shutdown begins: every answer then says `Connection: close` (docs/limits-and-load.md "Shutdown").
  const shutdown = { started: false };
  const app = createHttpApp(ports, sockets, ownFiles, shutdown, logger);
  const server = createHttpServer(settings, app, sockets, shutdown, logger, options.connections);
  if (ports.routes.metrics) countRequests(server.http, ports.routes.metrics.metrics.port);
  try {
    await listen(server.http, settings.port, settings.host);
  } catch (error) {
    await sockets.close();
    throw error;
  }
  const { port } = server.http.address() as AddressInfo;
  const { onDecision, ...idleHeapOptions } = options.idleHeap ?? {};
  const idleHeap = collectWhenIdle(() => server.open.size, { ...IDLE_HEAP_DEFAULTS, ...idleHeapOptions }, onDecision);
  const close = closeInOrder(server, sockets, ports.inFlight, shutdown, SHUTDOWN_GRACE_MS);
  const mdns = startAdvertising(settings, port, options, logger);
  return {
    url: serverUrl(settings.host, port),
    port,
    close: async () => {
      idleHeap.stop();
      await mdns?.close();
      return close();
    },
  };
}

/** docs/whats-now-playing.md "Found on the network": on by default, only when listening beyond loopback. */
function startAdvertising(settings: ServerSettings, port: number, options: ServerOptions, logger: Logger): MdnsAdvertiser | null {
  if (!settings.advertise) return null;
  const addresses = advertisedAddresses(settings.host, (options.mdns?.interfaces ?? os.networkInterfaces)());
  if (addresses.length === 0) return null;
  const host = os.hostname();
  const service = { instance: `svc on ${host}`, host, port, addresses, version: VERSION };
  return advertiseOverMdns({
    service,
    logger,
    ...(options.mdns?.socket ? { socket: options.mdns.socket } : {}),
    ...(options.mdns?.announce === undefined ? {} : { announce: options.mdns.announce }),
  });
}

/** The Koa app, its routes, and the policies every request shares (CORS, Host, request ids). */
interface HttpApp {
  app: ReturnType<typeof createApp>;
  answerLast: ReturnType<typeof createLastFastPath>;
  answerCover: ReturnType<typeof createCoverFastPath>;
  answerEvents: ReturnType<typeof createEventsFastPath>;
  hostAllowed: ReturnType<typeof hostCheck>;
  /** `trustProxy`: whose forwarding headers name the client (docs/running.md "Behind a proxy"). */
  trustedProxy: ProxyMatcher;
  /** Reads marked X-SVC-Fresh-Only, refused while the database is out of reach. */
  reads: FreshReads;
  /** limits.maxConnectionsPerAddress for the streams of each client behind a trusted proxy. */
  streams: ClientStreams;
}

/**
 * The reads that answer from the current state (docs/several-instances.md "Fresh reads through
 * nginx"): the current track, the history, the streams' first answer, the current images.
 */
const FRESH_READ_PATHS: readonly string[] = [
  '/v1/last',
  ...TEXT_PATHS,
  '/v1/history',
  '/v1/events',
  IMAGES_WS_PATH,
  WSSTREAM_PATH,
  FANART_STREAM_PATH,
  ...Object.keys(CURRENT_IMAGE_PATHS),
];

function createHttpApp(
  { settings, authentication, routes }: ServerPorts,
  sockets: Sockets,
  ownFiles: ReturnType<typeof staticRoutes>,
  shutdown: { readonly started: boolean },
  logger: Logger,
): HttpApp {
  const cors = corsPolicy(settings.corsOrigins);
  const hostAllowed = hostCheck(settings.host, settings.allowedHosts);
  const trustedProxy = trustedProxies(settings.trustProxy);
  const nextRequestId = createRequestIds();
  const reads = freshReads(FRESH_READ_PATHS, routes.health.databaseOk);
  const streams = clientStreams(settings.limits.maxConnectionsPerAddress, trustedProxy);
  const app = createApp({
    freshReads: reads,
    clientStreams: streams,
    logger,
    cors,
    nextRequestId,
    hostAllowed,
    writeOrigins: settings.writeOrigins,
    trustedProxy,
    authThrottle: throttleFailedAuthentication(authentication.secret, authentication.throttle, authentication.report, (ctx) =>
      ctx.path === ICECAST_LISTENERS_PATH ? ICECAST_LISTENERS_DOOR : undefined,
    ),
    routers: routersOf(routes, sockets, ownFiles, shutdown),
  });
  const answerLast = createLastFastPath({ nowPlaying: sockets.views.byDefault, cors, logger, nextRequestId, hostAllowed, text: routes.text });
  const answerCover = createCoverFastPath({ images: routes.cover.store.memory, cors, logger, nextRequestId, hostAllowed });
  const answerEvents = createEventsFastPath({ stream: sockets.events, cors, logger, nextRequestId, trustedProxy, hostAllowed });
  return { app, answerLast, answerCover, answerEvents, hostAllowed, trustedProxy, reads, streams };
}

/** Each router registered from its port, in the order they are tried; the streams' views are the server's own. */
function routersOf(
  routes: RouterPorts,
  sockets: Sockets,
  ownFiles: ReturnType<typeof staticRoutes>,
  shutdown: { readonly started: boolean },
): ReturnType<typeof v1Routes>[] {
  const views = { nowPlaying: sockets.views.byDefault, channels: sockets.views };
  return [
    v1Routes({ ...routes.v1, ...views }),
    icecastListenerRoutes(routes.icecastListeners),
    historyRoutes(routes.history),
    outputRoutes(routes.outputs),
    libraryRoutes(routes.library),
    reportRoutes(routes.reports),
    listenerRoutes(routes.listeners),
    recountRoutes(routes.recount),
    coverRoutes(routes.cover.store, routes.cover.blobs),
    currentImageRoutes({ ...routes.currentImages, ...views }),
    pageRoutes(),
    ownFiles,
    textRoutes(sockets.views.byDefault, routes.text, sockets.views),
    eventRoutes(sockets.events, (given) => sockets.of(given).events),
    healthRoutes({
      notReadyBecause: () => (shutdown.started ? 'shutting down' : routes.health.databaseOk() ? null : 'database unavailable'),
    }),
    requestRoutes(routes.requests),
    ...(routes.metrics ? [metricsRoutes(routes.metrics)] : []),
  ];
}

/** The streams a client holds open: /v1/images/ws, the wsstream and GET /v1/events, one set per channel asked for (channel-streams.ts). */
type Sockets = ChannelStreams;

/** The HTTP server: connection and pipelining limits, WebSocket upgrades by path, malformed requests answered. */
function createHttpServer(
  settings: ServerSettings,
  { app, answerLast, answerCover, answerEvents, hostAllowed, trustedProxy, reads, streams: perClient }: HttpApp,
  sockets: Sockets,
  shutdown: { started: boolean },
  logger: Logger,
  connections: ServerOptions['connections'] = {},
): { http: http.Server; open: ReadonlySet<Socket> } {
  const reportFlood = throttledLog((message) => logger.warn(message));
  const caps = createConnectionCaps(settings.limits, logger, { exemptFromPerAddress: trustedProxy, ...connections });
  const server = http.createServer(
    // docs/limits-and-load.md "Connections": a head within limits.headersTimeoutSeconds (a silent
    // connection counts from its start), a body within the processing budget; checked every second.
    {
      headersTimeout: settings.limits.headersTimeoutSeconds * 1000,
      requestTimeout: (settings.limits.headersTimeoutSeconds + settings.processingTimeoutSeconds) * 1000,
      connectionsCheckingInterval: 1000,
    },
    caps.guard(
      closeAfterAnswerWhen(
        () => shutdown.started,
        limitRequestsInFlight(
          refusalsToKoa(
            reads,
            perClient,
            createRequestListener(app, answerLast, answerCover, answerEvents),
            createRequestListener(app, () => false),
          ),
          {
            maxQueuedBytes: settings.limits.maxQueuedBytes,
            onFlood: (address) =>
              reportFlood('pipelining', `connection from ${address} closed: it pipelined more requests than svc holds for it, without reading the answers`),
          },
        ),
      ),
    ),
  );
  caps.watch(server);
  // Every socket, upgraded ones too (server.closeAllConnections() knows only HTTP ones): the
  // shutdown destroys what is still open at its deadline.
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  server.on('upgrade', (request, socket, head) => {
    const path = (request.url ?? '').split('?')[0];
    if (caps.refusedUpgrade(socket)) return;
    if (hostAllowed && !hostAllowed(request.headers.host)) {
      endWithError(socket, 'UNKNOWN_HOST', unknownHostMessage(request.headers.host ?? ''));
      return;
    }
    if (path !== IMAGES_WS_PATH && path !== WSSTREAM_PATH && path !== FANART_STREAM_PATH) {
      endWithError(socket, 'NOT_FOUND', `Not found: ${path}`);
      return;
    }
    if (reads.refuses(request.method, request.url, request.headers)) {
      endWithError(socket, 'STALE_READ_REFUSED', undefined, { 'Retry-After': '1' });
      return;
    }
    if (!perClient.admit(request, socket)) {
      endWithError(socket, 'TOO_MANY_STREAMS', undefined, { 'Retry-After': '1' });
      return;
    }
    // `?channel=` (docs/channels.md "Now playing per channel"): that channel's stream; an undeclared one is a 400.
    let streams;
    try {
      streams = sockets.of(channelParameter(request.url));
    } catch (error) {
      endWithError(socket, 'INVALID_PARAMETERS', error instanceof AppError ? error.message : undefined);
      return;
    }
    if (path === IMAGES_WS_PATH) streams.hub.handleUpgrade(request, socket, head);
    else if (path === WSSTREAM_PATH) streams.wsStream.handleUpgrade(request, socket, head);
    else streams.fanartStream.handleUpgrade(request, socket, head);
  });
  // A CONNECT (a proxy tunnel) is no request svc serves: 405, never a silent close.
  server.on('connect', (_request: http.IncomingMessage, socket: Duplex) => endWithError(socket, 'METHOD_NOT_ALLOWED', 'CONNECT is not allowed'));
  server.on('clientError', answerClientError);
  server.on('checkExpectation', answerUnknownExpectation);
  return { http: server, open };
}

/**
 * The shutdown, once however often called: stop accepting, close the sockets, let responses and
 * submissions finish within the grace.
 */
function closeInOrder(
  { http: server, open }: { http: http.Server; open: ReadonlySet<Socket> },
  sockets: Sockets,
  inFlight: ReadonlySet<Promise<unknown>>,
  shutdown: { started: boolean },
  graceMs: number,
): () => Promise<void> {
  let closing: Promise<void> | null = null;
  return () => {
    closing ??= (async () => {
      shutdown.started = true;
      const deadline = sleep(graceMs, undefined, { unref: true });
      // Stop accepting; idle keep-alive sockets go now, busy ones after their response, which
      // says `Connection: close` (closeAfterAnswerWhen): no new request starts on them.
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await sockets.close();
      const drained = await Promise.race([stopped.then(() => true), deadline.then(() => false)]);
      if (!drained) {
        server.closeAllConnections();
        for (const socket of open) socket.destroy();
      }
      await stopped;
      // A submission whose client went away still runs; let it finish before the database closes
      // (the composition root closes the background work and the database after this).
      await Promise.race([Promise.allSettled([...inFlight]), deadline]);
    })();
    return closing;
  };
}

/**
 * How long a shutdown waits for answers in flight before closing connections: the whole exit
 * stays within 2 s (docs/limits-and-load.md "Shutdown").
 */
const SHUTDOWN_GRACE_MS = 1500;

/**
 * A read the fresh-reads rule refuses, and an event stream past its client's cap, skip the fast
 * paths: Koa answers them (503, 429) and logs them like any other error.
 */
function refusalsToKoa(reads: FreshReads, streams: ClientStreams, handle: http.RequestListener, koaOnly: http.RequestListener): http.RequestListener {
  return (request, response) => {
    if (reads.refuses(request.method, request.url, request.headers)) return koaOnly(request, response);
    const stream = request.method === 'GET' && (request.url ?? '').split('?')[0] === '/v1/events';
    if (stream && !streams.admit(request, response)) return koaOnly(request, response);
    handle(request, response);
  };
}

/** Once `closing()` holds, every answer carries `Connection: close`, so a kept-alive connection takes no new request. */
function closeAfterAnswerWhen(closing: () => boolean, handle: http.RequestListener): http.RequestListener {
  return (request, response) => {
    if (closing()) response.setHeader('Connection', 'close');
    handle(request, response);
  };
}

/**
 * Connections the kernel may hold for svc before it accepts them (the system's own cap,
 * net.core.somaxconn, still applies). Node's default of 511 is smaller than a cover burst of
 * 1,000 overlays connecting at once: past it the kernel drops the connection attempt and the
 * client tries again only after a second (bench/instances.bench.js, cold-connection row).
 */
const LISTEN_BACKLOG = 4096;

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(new StartupError(listenErrorMessage(error, host, port)));
    server.once('error', onError);
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function listenErrorMessage(error: NodeJS.ErrnoException, host: string, port: number): string {
  switch (error.code) {
    case 'EADDRINUSE':
      return `cannot listen on ${host}:${port}: the port is already in use (is svc already running? \`svc status --url ${statusUrl(host, port)}\` says; else choose another port with --port)`;
    case 'EACCES':
      return `cannot listen on ${host}:${port}: permission denied (ports below 1024 need privileges)`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return `cannot listen on ${host}:${port}: no such address on this machine`;
    default:
      return `cannot listen on ${host}:${port}: ${error.message}`;
  }
}

/** Where `svc status` finds whatever holds the port: a wildcard listener is asked on loopback. */
function statusUrl(host: string, port: number): string {
  const asked = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${asked}:${port}`;
}

export { isLoopbackHost } from '../domain/host-names';

/** Stream kinds by path: the WebSockets and the SSE stream (GET /metrics "svc_stream_clients"). */
const STREAM_KINDS: Readonly<Record<string, string>> = {
  [IMAGES_WS_PATH]: 'images-ws',
  [WSSTREAM_PATH]: 'wsstream',
  [FANART_STREAM_PATH]: 'wsartistfanartstream',
  '/v1/events': 'events',
};

/**
 * Every answered request by route, method and status, whichever path answered it (Koa or a fast
 * path), and the streams open per kind: counted on the http server itself, so no route can miss it.
 */
function countRequests(server: http.Server, metrics: MetricsPort): void {
  const requests = metrics.counter('svc_http_requests_total', 'HTTP requests answered, by route, method and status.', ['route', 'method', 'status']);
  const open = new Map<string, number>(Object.values(STREAM_KINDS).map((kind) => [kind, 0]));
  const track = (kind: string | undefined, closed: NodeJS.EventEmitter) => {
    if (kind === undefined) return;
    open.set(kind, (open.get(kind) ?? 0) + 1);
    closed.once('close', () => open.set(kind, (open.get(kind) ?? 1) - 1));
  };
  metrics.gauge('svc_stream_clients', 'Stream connections open now, by kind (WebSockets and the SSE stream).', ['kind'], () =>
    [...open].map(([kind, count]) => [{ kind }, count] as const),
  );
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const path = (request.url ?? '').split('?')[0] ?? '';
    if (path === '/v1/events' && request.method === 'GET') track(STREAM_KINDS[path], response);
    response.once('finish', () => requests.inc({ route: routeLabel(path), method: request.method ?? 'GET', status: String(response.statusCode) }));
  });
  server.on('upgrade', (request: http.IncomingMessage, socket: Duplex) => track(STREAM_KINDS[(request.url ?? '').split('?')[0] ?? ''], socket));
}
