import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import type { Duplex } from 'node:stream';
import { serverUrl } from '../config/client-target';
import type { FrozenConfig } from '../config/schema';
import type { EnrichmentPlan } from '../enrich/enricher';
import type { SubmitDeps } from '../pipeline/submit-track';
import { buildEnrichmentPlan } from '../enrich/build-plan';
import { ServiceHealth } from '../enrich/service-health';
import { StartupError } from '../errors';
import { createLogger, throttledLog, type Logger } from '../log';
import { ImageCollector } from '../images/collector';
import { createImageFetcher, type ImageFetcherOptions } from '../images/fetch-image';
import { NowPlaying } from '../domain/current-track';
import { createOutputs } from '../outputs/create-outputs';
import { OutputDispatcher } from '../outputs/dispatcher';
import type { ImageStore } from '../store/images';
import { openStore } from '../store/open-store';
import type { Store } from '../store/store';
import { createStorageHealth, guardStore, isStorageUnavailable, type StorageHealth } from '../store/health';
import { withMemoryCache, type MemoryCachedImageStore } from '../store/image-memory-cache';
import type { TrackStore } from '../store/tracks';
import type { PlayLogStore } from '../store/plays';
import { sleep } from '../signals';
import { VERSION } from '../version';
import { RecordsInProgress } from '../pipeline/record-updates';
import { IcecastPoller } from '../pipeline/icecast-poller';
import { ListenerSessions } from '../pipeline/listener-sessions';
import { PlayLog } from '../pipeline/play-log';
import { followOtherInstances } from './other-instances';
import { createApp, createRequestListener } from './app';
import { createLastFastPath } from './last-fast-path';
import { createCoverFastPath } from './cover-fast-path';
import { corsPolicy } from './middleware/cors';
import { hostCheck, unknownHostMessage } from './request-guards';
import { trustedProxies, type ProxyMatcher } from '../domain/trusted-proxies';
import { limitConnections } from './connection-limits';
import { limitRequestsInFlight } from './pipelining';
import { QueueBudget } from './queue-budget';
import { createWorkPool, type WorkPool } from './work-pool';
import { idempotent as idempotentWrites } from './middleware/idempotency';
import { reportFailedAuthentication, throttleFailedAuthentication } from './middleware/auth-throttle';
import { AuthThrottle } from '../domain/auth-throttle';
import { createRequestIds } from './middleware/request-log';
import { answerClientError, answerUnknownExpectation, endWithError } from './raw-response';
import { coverRoutes, imageBlobs } from './routes/cover';
import { currentImageRoutes } from './routes/current-images';
import { eventRoutes } from './routes/events';
import { healthRoutes } from './routes/health';
import { createEventStream, type EventStream } from './sse/event-stream';
import { requestRoutes } from './routes/requests';
import { SongRequests } from '../pipeline/song-requests';
import { CurrentImages } from './current-images';
import { historyRoutes } from './routes/history';
import { icecastListenerRoutes } from './routes/icecast-listeners';
import { outputRoutes } from './routes/outputs';
import { pageRoutes } from './routes/pages';
import { staticRoutes } from './routes/static-files';
import { createTextAnswers, textRoutes } from './routes/last-text';
import { v1Routes } from './routes/v1';
import { IMAGES_WS_PATH, createImageHub, type ImageHub } from './ws/hub';
import { FANART_STREAM_PATH, WSSTREAM_PATH, createWsStream } from './ws/wsstream';
import { coverWaiter } from './ws/requests';
import { CoversInFlight } from '../domain/covers-in-flight';

// The composition root of the server process: builds the real objects, listens, and closes
// everything in reverse order.

export interface StartOptions {
  logger?: Logger;
  /** Replaces the configured enrichers (tests use slow or failing ones). */
  plan?: EnrichmentPlan;
  /** Image downloads: tests inject a resolver (names to loopback) or shorter limits. */
  imageFetch?: Partial<Pick<ImageFetcherOptions, 'resolve' | 'timeoutMs' | 'maxBytes' | 'allowAddress'>>;
  /** Outputs: tests poll their queues more often. */
  outputPollMs?: number;
  /** Outputs: tests give up after a few attempts instead of 500. */
  outputMaxAttempts?: number;
  /** /v1/images/ws: tests use a short ping interval or a small per-client buffer. */
  ws?: { pingIntervalMs?: number; maxBufferedBytes?: number; subscribeWindowMs?: number };
}

export interface RunningServer {
  url: string;
  port: number;
  tracks: TrackStore;
  hub: ImageHub;
  images: ImageCollector;
  imageStore: ImageStore;
  /** What another entry point (the Icecast source listener) needs to submit as /v1/remoteinput does. */
  submission: { deps: SubmitDeps; nextReceivedSeq(): Promise<number>; trackInFlight<T>(work: Promise<T>): Promise<T> };
  /** Failed authentication per address: the Icecast listener's doors share it with the HTTP API. */
  authentication: { throttle: AuthThrottle; report: ReturnType<typeof reportFailedAuthentication> };
  /** GET /v1/events: its readers and their unsent bytes (tests check the bound). */
  events: EventStream;
  /** The play log's store: plays, listener sessions (docs/play-log.md). */
  plays: PlayLogStore;
  playLog: PlayLog;
  close(): Promise<void>;
}

export async function startServer(config: FrozenConfig, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  // Checked before the database opens: a wrong staticDir stops start-up with nothing to undo.
  const ownFiles = staticRoutes(config.staticDir);
  const storage = await openStorage(config, logger);
  const work = createWork(config, options, storage, logger);
  const sockets = createSockets(config, options, storage, work, logger);
  // Set once shutdown begins: every answer then says `Connection: close` (docs/limits-and-load.md "Shutdown").
  const shutdown = { started: false };
  const app = createHttpApp(config, storage, work, sockets, ownFiles, shutdown, logger);
  const server = createHttpServer(config, app, sockets, shutdown, logger);
  try {
    await listen(server.http, config.port, config.host);
  } catch (error) {
    work.stopFollowing();
    await work.outputs.close();
    await work.poller.close();
    await work.playLog.close();
    await storage.store.close();
    throw error;
  }
  const { port } = server.http.address() as AddressInfo;
  const { tracks } = storage;
  return {
    url: serverUrl(config.host, port),
    port,
    tracks: storage.plainTracks,
    hub: sockets.hub,
    images: work.images,
    imageStore: storage.plainImageStore,
    events: sockets.events,
    authentication: { throttle: work.authThrottle, report: work.reportFailedAuthentication },
    plays: storage.store.plays,
    playLog: work.playLog,
    submission: { deps: work.submitDeps, nextReceivedSeq: () => tracks.nextReceivedSeq(), trackInFlight: work.trackInFlight },
    close: closeInOrder(server, sockets, storage, work, shutdown, SHUTDOWN_GRACE_MS),
  };
}

/** The opened database, its health, the stores the server works through, and the current track. */
interface Storage {
  store: Store;
  health: StorageHealth;
  /** Guarded: a failing database marks the health and answers 503. */
  tracks: TrackStore;
  imageStore: MemoryCachedImageStore;
  /** The plain stores, handed out by RunningServer. */
  plainTracks: TrackStore;
  plainImageStore: ImageStore;
  nowPlaying: NowPlaying;
}

/** Opens the store, probes that it takes writes, and reads the current track; closes it again on failure. */
async function openStorage(config: FrozenConfig, logger: Logger): Promise<Storage> {
  // A lost database drops every pooled connection at once: one line per kind of news per minute.
  const reportConnection = throttledLog((message) => logger.warn(message));
  const store = await openStore(config.database.location, {
    maxImageBytes: config.images.maxTotalBytes,
    poolSize: config.database.poolSize,
    listenUrl: config.database.listenUrl,
    onConnectionProblem: (message) => reportConnection(message.includes('restored') ? 'restored' : 'lost', message),
    // An upgrade of an existing database is worth one line (docs/running.md "Upgrades"): a
    // backup taken before it is of the old version. A new database is not news.
    onMigrated: (fromVersion, toVersion) => {
      if (fromVersion > 0) logger.info(`database schema upgraded from version ${fromVersion} to ${toVersion}`);
    },
  });
  const health = createStorageHealth(logger);
  // A database that takes no writes is reported now (logged, /v1/status "unavailable"), not
  // at the first submission; the server still starts and serves what is stored.
  try {
    await health.run(() => store.probeWrite(), true);
  } catch (error) {
    if (!isStorageUnavailable(error)) {
      await store.close();
      throw error;
    }
  }
  // The server works through guarded stores; RunningServer hands out the plain ones.
  const plainTracks = store.tracks;
  // The arrival number is the first write of a submission: with the connection lost it fails at once too.
  const tracks = guardStore(plainTracks, health, ['insert', 'updateMetadata', 'remove'], ['nextReceivedSeq']);
  let nowPlaying: NowPlaying;
  try {
    nowPlaying = new NowPlaying(await tracks.current());
  } catch (error) {
    await store.close();
    throw error;
  }
  const plainImageStore = store.images;
  // Reads of image bytes are served from memory above the guarded store (covers at audience scale).
  const imageStore = withMemoryCache(guardStore(plainImageStore, health, ['put', 'link', 'rememberUrl']), config.images.memoryCacheBytes);
  return { store, health, tracks, imageStore, plainTracks, plainImageStore, nowPlaying };
}

/** What runs behind the requests: images, outputs, enrichment, other instances, in-flight submissions. */
interface Work {
  images: ImageCollector;
  outputs: OutputDispatcher;
  stopFollowing: () => void;
  serviceHealth: ServiceHealth;
  submitDeps: SubmitDeps;
  /** Submissions under way, waited for on shutdown. */
  inFlight: Set<Promise<unknown>>;
  trackInFlight: <T>(work: Promise<T>) => Promise<T>;
  queueBudget: QueueBudget;
  expensiveWork: WorkPool;
  currentImages: CurrentImages;
  /** Failed authentication per address, shared by every door (docs/security.md "Guessing the secret"). */
  authThrottle: AuthThrottle;
  reportFailedAuthentication: ReturnType<typeof reportFailedAuthentication>;
  /** Idempotency-Key handling of the writes (docs/limits-and-load.md). */
  idempotent: ReturnType<typeof idempotentWrites>;
  /** The song-request queue (docs/song-requests.md). */
  songRequests: SongRequests;
  /** Planned ends, listener counts and complement warnings of the play log (docs/play-log.md). */
  playLog: PlayLog;
  listenerSessions: ListenerSessions;
  poller: IcecastPoller;
}

function createWork(config: FrozenConfig, options: StartOptions, storage: Storage, logger: Logger): Work {
  const { store, health, tracks, imageStore, plainImageStore, nowPlaying } = storage;
  // One fetcher, one address guard, for submitted covers and enrichment images alike.
  const fetchImage = createImageFetcher({
    allowPrivateAddresses: config.coverFetch.allowPrivateAddresses,
    userAgent: `svc/${VERSION}`,
    maxConcurrentDownloads: config.images.maxConcurrentDownloads,
    ...options.imageFetch,
  });
  const images = new ImageCollector({ store: imageStore, nowPlaying, fetchImage, logger });
  const stopFollowing = followOtherInstances({ store, tracks, nowPlaying, images, health, logger });
  // Subscribed before anything can change the current track; sends from the plain image store.
  const outputs = new OutputDispatcher({
    outputs: createOutputs(config.outputs, {
      images: plainImageStore,
      logger,
      instance: instanceName(config.port),
      records: {
        before: async (dbid) => {
          const [record] = (await tracks.history({ limit: 1, before: dbid })).records;
          return record ? { data: { dbid: record.dbid, ...record.metadata }, receivedAtMs: Date.parse(record.receivedAt) } : undefined;
        },
      },
    }),
    store: store.outputs,
    nowPlaying,
    logger,
    retryForSeconds: new Map(config.outputs.map((output) => [output.name, output.retryForSeconds ?? 86_400])),
    // A record's enrichment ends by its deadline; the second covers its last write.
    holdMs: (config.enrichment.deadlineSeconds + 1) * 1000,
    delaySeconds: new Map(config.outputs.map((output) => [output.name, output.delay])),
    ...(options.outputPollMs === undefined ? {} : { pollMs: options.outputPollMs }),
    ...(options.outputMaxAttempts === undefined ? {} : { maxAttemptsPerMessage: options.outputMaxAttempts }),
  });
  const inFlight = new Set<Promise<unknown>>();
  const trackInFlight = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    const forget = () => inFlight.delete(work);
    work.then(forget, forget);
    return work;
  };
  // Outside services that failed lately: skipped for a while, and named by /v1/status.
  const serviceHealth = new ServiceHealth();
  const songRequests = new SongRequests(store.songRequests, logger);
  const { playLog, listenerSessions, poller } = createPlayLog(config, store, logger);
  const submitDeps: SubmitDeps = {
    secret: config.secret,
    maxFields: config.limits.maxFields,
    maxFieldLength: config.maxFieldLength,
    maxListItems: config.limits.maxListItems,
    maxRecordBytes: config.limits.maxRecordBytes,
    processingTimeoutSeconds: config.processingTimeoutSeconds,
    enrichmentDeadlineSeconds: config.enrichment.deadlineSeconds,
    dedupeSeconds: config.dedupeSeconds,
    inProgress: new RecordsInProgress(),
    coversInFlight: new CoversInFlight(),
    // A new track fulfils the song request it matches (docs/song-requests.md).
    ...(config.requests.enabled ? { songRequests } : {}),
    plan: options.plan ?? buildEnrichmentPlan(config, { lookupCache: store.lookupCache, requestSlots: store.requestSlots, serviceHealth, logger }),
    tracks,
    nowPlaying,
    logger,
    images,
    playLog,
  };
  // A first request ends within the processing budget (408 frees its key), so a key still
  // unanswered 5 s past it belongs to an instance that died: a repeat waits that long, then runs.
  const idempotencyLeaseMs = (config.processingTimeoutSeconds + 5) * 1000;
  return {
    songRequests,
    authThrottle: new AuthThrottle(),
    reportFailedAuthentication: reportFailedAuthentication(logger),
    idempotent: idempotentWrites(store.idempotency, {
      waitMs: idempotencyLeaseMs + 2000,
      leaseMs: idempotencyLeaseMs,
      storedAnswer: async (dbid) => {
        const record = await tracks.byDbid(dbid);
        return record ? JSON.stringify({ dbid: record.dbid, processed_metadata: record.metadata }) : null;
      },
      secret: config.secret,
    }),
    images,
    outputs,
    stopFollowing,
    serviceHealth,
    submitDeps,
    inFlight,
    trackInFlight,
    queueBudget: new QueueBudget(config.limits.maxQueuedBytes),
    // History pages, SSE replays, ...: a few at a time, fair between addresses (docs/limits-and-load.md).
    expensiveWork: createWorkPool(),
    currentImages: new CurrentImages({ nowPlaying, store: imageStore, announcements: images }),
    playLog,
    listenerSessions,
    poller,
  };
}

/** The play log's background work: planned ends and listener counts, and the Icecast listener feeds. */
function createPlayLog(config: FrozenConfig, store: Store, logger: Logger): Pick<Work, 'playLog' | 'listenerSessions' | 'poller'> {
  const { playlog } = config;
  const listenerSessions = new ListenerSessions({ plays: store.plays, servers: playlog.icecast, keepAddresses: playlog.keepAddresses, logger });
  const playLog = new PlayLog({
    plays: store.plays,
    policy: playlog,
    logger,
    countsListeners: listenerSessions.configured,
    complement: playlog.complement,
    minSessionSeconds: playlog.minSessionSeconds,
  });
  const poller = new IcecastPoller({ servers: playlog.icecast, sessions: listenerSessions, plays: store.plays, logger });
  playLog.start();
  poller.start();
  return { playLog, listenerSessions, poller };
}

/** The Koa app, its routes, and the policies every request shares (CORS, Host, request ids). */
interface HttpApp {
  app: ReturnType<typeof createApp>;
  answerLast: ReturnType<typeof createLastFastPath>;
  answerCover: ReturnType<typeof createCoverFastPath>;
  hostAllowed: ReturnType<typeof hostCheck>;
  /** `trustProxy`: whose forwarding headers name the client (docs/running.md "Behind a proxy"). */
  trustedProxy: ProxyMatcher;
}

function createHttpApp(
  config: FrozenConfig,
  storage: Storage,
  work: Work,
  sockets: Sockets,
  ownFiles: ReturnType<typeof staticRoutes>,
  shutdown: { readonly started: boolean },
  logger: Logger,
): HttpApp {
  const { health, tracks, imageStore, nowPlaying } = storage;
  const cors = corsPolicy(config.corsOrigins);
  const hostAllowed = hostCheck(config.host, config.allowedHosts);
  const trustedProxy = trustedProxies(config.trustProxy);
  const nextRequestId = createRequestIds();
  const textAnswers = createTextAnswers(config.pages.idleText);
  const blobs = imageBlobs(imageStore, work.queueBudget, work.expensiveWork);
  const app = createApp({
    logger,
    cors,
    nextRequestId,
    hostAllowed,
    writeOrigins: config.writeOrigins,
    trustedProxy,
    authThrottle: throttleFailedAuthentication(config.secret, work.authThrottle, work.reportFailedAuthentication),
    routers: [
      v1Routes({
        version: VERSION,
        maxBodyBytes: config.maxBodyBytes,
        nowPlaying,
        tracks,
        databaseState: () => health.state(),
        ...(storage.store.notifications ? { notifications: () => storage.store.notifications?.() ?? 'ok' } : {}),
        failingServices: () => work.serviceHealth.failing(),
        trackInFlight: work.trackInFlight,
        idempotent: work.idempotent,
        submit: work.submitDeps,
        playLog: work.playLog,
      }),
      icecastListenerRoutes({
        secret: config.secret,
        maxBodyBytes: config.maxBodyBytes,
        sessions: work.listenerSessions,
        playLog: work.playLog,
        logger,
      }),
      historyRoutes({ secret: config.secret, tracks, nowPlaying, pool: work.expensiveWork, budget: work.queueBudget, idempotent: work.idempotent }),
      outputRoutes({ secret: config.secret, outputs: work.outputs, nowPlaying }),
      coverRoutes(imageStore, blobs),
      currentImageRoutes({ nowPlaying, current: work.currentImages, store: imageStore, blobs }),
      pageRoutes(),
      ownFiles,
      textRoutes(nowPlaying, textAnswers),
      eventRoutes(sockets.events),
      healthRoutes({
        notReadyBecause: () => (shutdown.started ? 'shutting down' : health.state() === 'ok' ? null : 'database unavailable'),
      }),
      requestRoutes({
        secret: config.secret,
        enabled: config.requests.enabled,
        maxBodyBytes: config.maxBodyBytes,
        requests: work.songRequests,
        version: VERSION,
      }),
    ],
  });
  const answerLast = createLastFastPath({ nowPlaying, cors, logger, nextRequestId, hostAllowed, text: textAnswers });
  const answerCover = createCoverFastPath({ images: imageStore.memory, cors, logger, nextRequestId, hostAllowed });
  return { app, answerLast, answerCover, hostAllowed, trustedProxy };
}

/** The streams a client holds open: /v1/images/ws, the wsstream and GET /v1/events. */
interface Sockets {
  hub: ImageHub;
  events: EventStream;
  wsStream: ReturnType<typeof createWsStream>;
  /** /wsartistfanartstream: the wsstream frames with a changing artist fanart. */
  fanartStream: ReturnType<typeof createWsStream>;
}

function createSockets(config: FrozenConfig, options: StartOptions, storage: Storage, work: Work, logger: Logger): Sockets {
  const { imageStore, nowPlaying, tracks } = storage;
  const { images } = work;
  const hub = createImageHub({
    nowPlaying,
    logger,
    version: VERSION,
    budget: work.queueBudget,
    images: {
      imagesOf: (record) => images.imagesOf(record),
      on: (event, listener) => images.on(event, listener),
      off: (event, listener) => images.off(event, listener),
      find: (query) => imageStore.find(query),
      meta: (key) => imageStore.meta(key),
      slice: (key, offset, length) => imageStore.slice(key, offset, length),
    },
    ...(work.submitDeps.coversInFlight ? { awaitCover: coverWaiter(work.submitDeps.coversInFlight, work.submitDeps.enrichmentDeadlineSeconds * 1000) } : {}),
    ...options.ws,
  });
  const wsStream = createWsStream({
    nowPlaying,
    logger,
    images: { slice: (key, offset, length) => imageStore.slice(key, offset, length) },
    current: work.currentImages,
    budget: work.queueBudget,
    completeByDefault: config.wsstream.complete,
    settleDeadlineMs: config.enrichment.deadlineSeconds * 1000,
    ...(options.ws?.pingIntervalMs === undefined ? {} : { pingIntervalMs: options.ws.pingIntervalMs }),
  });
  const fanartStream = createWsStream({
    nowPlaying,
    logger,
    images: { slice: (key, offset, length) => imageStore.slice(key, offset, length) },
    current: work.currentImages,
    budget: work.queueBudget,
    fanart: { intervalMs: config.wsstream.fanartSeconds * 1000, find: (query) => imageStore.find(query) },
    ...(options.ws?.pingIntervalMs === undefined ? {} : { pingIntervalMs: options.ws.pingIntervalMs }),
  });
  const events = createEventStream({ nowPlaying, tracks, budget: work.queueBudget, pool: work.expensiveWork, logger });
  work.songRequests.on('added', (request) => events.announce('request.added', request));
  work.songRequests.on('removed', (request) => events.announce('request.removed', request));
  return { hub, wsStream, fanartStream, events };
}

/** The HTTP server: connection and pipelining limits, WebSocket upgrades by path, malformed requests answered. */
function createHttpServer(
  config: FrozenConfig,
  { app, answerLast, answerCover, hostAllowed, trustedProxy }: HttpApp,
  sockets: Sockets,
  shutdown: { started: boolean },
  logger: Logger,
): { http: http.Server; open: ReadonlySet<Socket> } {
  const reportFlood = throttledLog((message) => logger.warn(message));
  const server = http.createServer(
    // docs/limits-and-load.md "Connections": a head within limits.headersTimeoutSeconds (a silent
    // connection counts from its start), a body within the processing budget; checked every second.
    {
      headersTimeout: config.limits.headersTimeoutSeconds * 1000,
      requestTimeout: (config.limits.headersTimeoutSeconds + config.processingTimeoutSeconds) * 1000,
      connectionsCheckingInterval: 1000,
    },
    closeAfterAnswerWhen(
      () => shutdown.started,
      limitRequestsInFlight(createRequestListener(app, answerLast, answerCover), {
        maxQueuedBytes: config.limits.maxQueuedBytes,
        onFlood: (address) =>
          reportFlood('pipelining', `connection from ${address} closed: it pipelined more requests than svc holds for it, without reading the answers`),
      }),
    ),
  );
  limitConnections(server, config.limits, logger, trustedProxy);
  // Every socket, upgraded ones too (server.closeAllConnections() knows only HTTP ones): the
  // shutdown destroys what is still open at its deadline.
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  server.on('upgrade', (request, socket, head) => {
    const path = (request.url ?? '').split('?')[0];
    if (hostAllowed && !hostAllowed(request.headers.host)) {
      endWithError(socket, 'UNKNOWN_HOST', unknownHostMessage(request.headers.host ?? ''));
      return;
    }
    if (path === IMAGES_WS_PATH) {
      sockets.hub.handleUpgrade(request, socket, head);
      return;
    }
    if (path === WSSTREAM_PATH) {
      sockets.wsStream.handleUpgrade(request, socket, head);
      return;
    }
    if (path === FANART_STREAM_PATH) {
      sockets.fanartStream.handleUpgrade(request, socket, head);
      return;
    }
    endWithError(socket, 'NOT_FOUND', `Not found: ${path}`);
  });
  // A CONNECT (a proxy tunnel) is no request svc serves: 405, never a silent close.
  server.on('connect', (_request: http.IncomingMessage, socket: Duplex) => endWithError(socket, 'METHOD_NOT_ALLOWED', 'CONNECT is not allowed'));
  server.on('clientError', answerClientError);
  server.on('checkExpectation', answerUnknownExpectation);
  return { http: server, open };
}

/**
 * The shutdown, once however often called: stop accepting, close the sockets, let responses and
 * submissions finish within the grace, then background work, and the database last.
 */
function closeInOrder(
  { http: server, open }: { http: http.Server; open: ReadonlySet<Socket> },
  sockets: Sockets,
  storage: Storage,
  work: Work,
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
      sockets.events.close();
      await Promise.all([sockets.hub.close(), sockets.wsStream.close(), sockets.fanartStream.close()]);
      const drained = await Promise.race([stopped.then(() => true), deadline.then(() => false)]);
      if (!drained) {
        server.closeAllConnections();
        for (const socket of open) socket.destroy();
      }
      await stopped;
      // A submission whose client went away still runs; let it finish before the database closes.
      await Promise.race([Promise.allSettled([...work.inFlight]), deadline]);
      // Then the background image downloads: abandoned, and waited for, before the database closes.
      await work.images.close();
      work.stopFollowing();
      // Deliveries under way are cut short and stay pending in the store for the next start.
      await work.outputs.close();
      await work.poller.close();
      await work.playLog.close();
      await storage.store.close();
    })();
    return closing;
  };
}

/**
 * How long a shutdown waits for answers in flight before closing connections: the whole exit
 * stays within 2 s (docs/limits-and-load.md "Shutdown").
 */
const SHUTDOWN_GRACE_MS = 1500;

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
      return `cannot listen on ${host}:${port}: the port is already in use (is svc already running? \`svc status\` says; else choose another port with --port)`;
    case 'EACCES':
      return `cannot listen on ${host}:${port}: permission denied (ports below 1024 need privileges)`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return `cannot listen on ${host}:${port}: no such address on this machine`;
    default:
      return `cannot listen on ${host}:${port}: ${error.message}`;
  }
}

export { isLoopbackHost } from './request-guards';

/** A name that stays the same across restarts (a retained MQTT topic per name): the host and port, or the process without a fixed port. */
function instanceName(port: number): string {
  return `${os.hostname()}-${port === 0 ? `pid${process.pid}` : port}`;
}
