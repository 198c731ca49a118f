import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FrozenConfig } from '../config/schema';
import type { EnrichmentPlan } from '../enrich/enricher';
import { buildEnrichmentPlan } from '../enrich/build-plan';
import { StartupError } from '../errors';
import { createLogger, throttledLog, type Logger } from '../log';
import { ImageCollector } from '../images/collector';
import { createImageFetcher, type ImageFetcherOptions } from '../images/fetch-image';
import { NowPlaying } from '../store/now-playing';
import type { ImageStore } from '../store/images';
import { openStore } from '../store/open-store';
import { createStorageHealth, guardStore } from '../store/health';
import { withMemoryCache } from '../store/image-memory-cache';
import type { TrackStore } from '../store/tracks';
import { VERSION } from '../version';
import { followOtherInstances } from './other-instances';
import { createApp, createRequestListener } from './app';
import { createLastFastPath } from './last-fast-path';
import { corsPolicy } from './middleware/cors';
import { hostCheck } from './request-guards';
import { limitConnections } from './connection-limits';
import { limitRequestsInFlight } from './pipelining';
import { QueueBudget } from './queue-budget';
import { createRequestIds } from './middleware/request-log';
import { answerClientError, endWithError } from './raw-response';
import { coverRoutes } from './routes/cover';
import { historyRoutes } from './routes/history';
import { pageRoutes } from './routes/pages';
import { v1Routes } from './routes/v1';
import { IMAGES_WS_PATH, createImageHub, type ImageHub } from './ws/hub';
import { WSSTREAM_PATH, createWsStream } from './ws/wsstream';

// The composition root of the server process: builds the real objects, listens, and closes
// everything in reverse order.

export interface StartOptions {
  logger?: Logger;
  /** Replaces the configured enrichers (tests use slow or failing ones). */
  plan?: EnrichmentPlan;
  /** How long a shutdown waits for in-flight submissions before closing connections. */
  shutdownGraceMs?: number;
  /** Image downloads: tests inject a resolver (names to loopback) or shorter limits. */
  imageFetch?: Partial<Pick<ImageFetcherOptions, 'resolve' | 'timeoutMs' | 'maxBytes' | 'allowAddress'>>;
  /** /v1/images/ws: tests use a short ping interval or a small per-client buffer. */
  ws?: { pingIntervalMs?: number; maxBufferedBytes?: number; subscribeWindowMs?: number };
}

export interface RunningServer {
  url: string;
  port: number;
  host: string;
  tracks: TrackStore;
  nowPlaying: NowPlaying;
  hub: ImageHub;
  images: ImageCollector;
  imageStore: ImageStore;
  close(): Promise<void>;
}

export async function startServer(config: FrozenConfig, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  // A lost database drops every pooled connection at once: one line per kind of news per minute.
  const reportConnection = throttledLog((message) => logger.warn(message));
  const store = await openStore(config.database.location, {
    maxImageBytes: config.images.maxTotalBytes,
    poolSize: config.database.poolSize,
    onConnectionProblem: (message) => reportConnection(message.includes('restored') ? 'restored' : 'lost', message),
  });
  const health = createStorageHealth(logger);
  // The server works through guarded stores; RunningServer hands out the plain ones.
  const plainTracks = store.tracks;
  const tracks = guardStore(plainTracks, health, ['insert', 'updateMetadata', 'remove']);
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
  // One fetcher, one address guard, for submitted covers and enrichment images alike.
  const fetchImage = createImageFetcher({
    allowPrivateAddresses: config.coverFetch.allowPrivateAddresses,
    userAgent: `svc/${VERSION}`,
    maxConcurrentDownloads: config.images.maxConcurrentDownloads,
    ...options.imageFetch,
  });
  const images = new ImageCollector({ store: imageStore, tracks, nowPlaying, fetchImage, logger });
  const stopFollowing = followOtherInstances({ store, tracks, nowPlaying, images, health, logger });
  const inFlight = new Set<Promise<unknown>>();

  const trackInFlight = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    const forget = () => inFlight.delete(work);
    work.then(forget, forget);
    return work;
  };

  const queueBudget = new QueueBudget(config.limits.maxQueuedBytes);
  const cors = corsPolicy(config.corsOrigins);
  const hostAllowed = hostCheck(config.host, config.allowedHosts);
  const nextRequestId = createRequestIds();
  const app = createApp({
    logger,
    cors,
    nextRequestId,
    hostAllowed,
    writeOrigins: config.writeOrigins,
    routers: [
      v1Routes({
        version: VERSION,
        maxBodyBytes: config.maxBodyBytes,
        nowPlaying,
        tracks,
        databaseState: () => health.state(),
        trackInFlight,
        submit: {
          secret: config.secret,
          maxFields: config.limits.maxFields,
          maxFieldLength: config.maxFieldLength,
          processingTimeoutSeconds: config.processingTimeoutSeconds,
          enrichmentDeadlineSeconds: config.enrichment.deadlineSeconds,
          plan: options.plan ?? buildEnrichmentPlan(config, { lookupCache: store.lookupCache, requestSlots: store.requestSlots, logger }),
          tracks,
          nowPlaying,
          logger,
          images,
        },
      }),
      historyRoutes({ secret: config.secret, tracks, nowPlaying }),
      coverRoutes(imageStore, queueBudget),
      pageRoutes(),
    ],
  });

  const hub = createImageHub({
    nowPlaying,
    logger,
    version: VERSION,
    budget: queueBudget,
    images: {
      imagesOf: (record) => images.imagesOf(record),
      on: (event, listener) => images.on(event, listener),
      off: (event, listener) => images.off(event, listener),
      find: (query) => imageStore.find(query),
      meta: (key) => imageStore.meta(key),
      slice: (key, offset, length) => imageStore.slice(key, offset, length),
    },
    ...options.ws,
  });
  const wsStream = createWsStream({
    nowPlaying,
    logger,
    images: { meta: (key) => imageStore.meta(key), slice: (key, offset, length) => imageStore.slice(key, offset, length) },
    budget: queueBudget,
    ...(options.ws?.pingIntervalMs === undefined ? {} : { pingIntervalMs: options.ws.pingIntervalMs }),
  });
  const answerLast = createLastFastPath({ nowPlaying, cors, logger, nextRequestId, hostAllowed });
  const reportFlood = throttledLog((message) => logger.warn(message));
  const server = http.createServer(
    limitRequestsInFlight(createRequestListener(app, answerLast), {
      maxQueuedBytes: config.limits.maxQueuedBytes,
      onFlood: (address) =>
        reportFlood('pipelining', `connection from ${address} closed: it pipelined more requests than svc holds for it, without reading the answers`),
    }),
  );
  limitConnections(server, config.limits, logger);
  server.on('upgrade', (request, socket, head) => {
    const path = (request.url ?? '').split('?')[0];
    if (hostAllowed && !hostAllowed(request.headers.host)) {
      endWithError(socket, 'UNKNOWN_HOST', `Unknown host: ${(request.headers.host ?? '').slice(0, 256)}`);
      return;
    }
    if (path === IMAGES_WS_PATH) {
      hub.handleUpgrade(request, socket, head);
      return;
    }
    if (path === WSSTREAM_PATH) {
      wsStream.handleUpgrade(request, socket, head);
      return;
    }
    endWithError(socket, 'NOT_FOUND', `Not found: ${path}`);
  });
  server.on('clientError', answerClientError);
  try {
    await listen(server, config.port, config.host);
  } catch (error) {
    stopFollowing();
    await store.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      const graceMs = options.shutdownGraceMs ?? 10_000;
      const deadline = delay(graceMs);
      // Stop accepting; idle keep-alive sockets go now, busy ones after their response.
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await Promise.all([hub.close(), wsStream.close()]);
      const drained = await Promise.race([stopped.then(() => true), deadline.then(() => false)]);
      if (!drained) server.closeAllConnections();
      await stopped;
      // A submission whose client went away still runs; let it finish before the database closes.
      await Promise.race([Promise.allSettled([...inFlight]), deadline]);
      // Then the background image downloads: abandoned, and waited for, before the database closes.
      await images.close();
      stopFollowing();
      await store.close();
    })();
    return closing;
  };

  return { url: formatUrl(config.host, port), port, host: config.host, tracks: plainTracks, nowPlaying, hub, images, imageStore: plainImageStore, close };
}

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(new StartupError(listenErrorMessage(error, host, port)));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function listenErrorMessage(error: NodeJS.ErrnoException, host: string, port: number): string {
  switch (error.code) {
    case 'EADDRINUSE':
      return `cannot listen on ${host}:${port}: the port is already in use (choose another with --port)`;
    case 'EACCES':
      return `cannot listen on ${host}:${port}: permission denied (ports below 1024 need privileges)`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return `cannot listen on ${host}:${port}: no such address on this machine`;
    default:
      return `cannot listen on ${host}:${port}: ${error.message}`;
  }
}

export function formatUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export { isLoopbackHost } from './request-guards';

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
