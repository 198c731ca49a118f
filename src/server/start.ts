import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FrozenConfig } from '../config/schema';
import type { EnrichmentPlan } from '../enrich/enricher';
import { buildEnrichmentPlan } from '../enrich/build-plan';
import { StartupError } from '../errors';
import { createLogger, type Logger } from '../log';
import { NowPlaying } from '../pipeline/now-playing';
import { openDatabase } from '../store/database';
import { createTrackStore, type TrackStore } from '../store/tracks';
import { VERSION } from '../version';
import { createApp } from './app';
import { v1Routes } from './routes/v1';
import { IMAGES_WS_PATH, createImageHub, type ImageHub } from './ws/hub';

// The composition root of the server process: builds the real objects, listens, and closes
// everything in reverse order.

export interface StartOptions {
  logger?: Logger;
  /** Replaces the configured enrichers (tests use slow or failing ones). */
  plan?: EnrichmentPlan;
  /** How long a shutdown waits for in-flight submissions before closing connections. */
  shutdownGraceMs?: number;
}

export interface RunningServer {
  url: string;
  port: number;
  host: string;
  tracks: TrackStore;
  nowPlaying: NowPlaying;
  hub: ImageHub;
  close(): Promise<void>;
}

export async function startServer(config: FrozenConfig, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  const db = openDatabase(config.database);
  const tracks = createTrackStore(db);
  const nowPlaying = new NowPlaying(tracks.current());
  const inFlight = new Set<Promise<unknown>>();

  const trackInFlight = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    const forget = () => inFlight.delete(work);
    work.then(forget, forget);
    return work;
  };

  const app = createApp({
    logger,
    corsOrigins: config.corsOrigins,
    routers: [
      v1Routes({
        version: VERSION,
        maxBodyBytes: config.maxBodyBytes,
        nowPlaying,
        tracks,
        trackInFlight,
        submit: {
          secret: config.secret,
          maxFieldLength: config.maxFieldLength,
          processingTimeoutSeconds: config.processingTimeoutSeconds,
          enrichmentDeadlineSeconds: config.enrichment.deadlineSeconds,
          plan: options.plan ?? buildEnrichmentPlan(config, { db, logger }),
          tracks,
          nowPlaying,
          logger,
        },
      }),
    ],
  });

  const hub = createImageHub({ nowPlaying, logger });
  const server = http.createServer(app.callback());
  server.on('upgrade', (request, socket, head) => {
    const path = (request.url ?? '').split('?')[0];
    if (path === IMAGES_WS_PATH) {
      hub.handleUpgrade(request, socket, head);
      return;
    }
    socket.end('HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"error":"Not found"}');
  });
  try {
    await listen(server, config.port, config.host);
  } catch (error) {
    db.close();
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
      await hub.close();
      const drained = await Promise.race([stopped.then(() => true), deadline.then(() => false)]);
      if (!drained) server.closeAllConnections();
      await stopped;
      // A submission whose client went away still runs; let it finish before the database closes.
      await Promise.race([Promise.allSettled([...inFlight]), deadline]);
      db.close();
    })();
    return closing;
  };

  return { url: formatUrl(config.host, port), port, host: config.host, tracks, nowPlaying, hub, close };
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

/** Loopback hosts need no secret; anything else is reachable from the network. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
