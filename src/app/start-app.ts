import type { FrozenConfig } from '../config/schema';
import { recordJson } from '../domain/play';
import type { EnrichmentPlan } from '../enrich/enricher';
import type { SubmitDeps } from '../pipeline/submit-track';
import { submitTrack } from '../pipeline/submit-track';
import { buildEnrichmentPlan } from '../enrich/build-plan';
import { ServiceHealth } from '../enrich/service-health';
import { createLogger, throttledLog, type Logger } from '../log';
import { ImageCollector } from '../images/collector';
import { createImageFetcher, type ImageFetcherOptions } from '../images/fetch-image';
import { NowPlaying } from '../domain/current-track';
import { AuthThrottle } from '../domain/auth-throttle';
import { CoversInFlight } from '../domain/covers-in-flight';
import { createOutputs } from '../outputs/create-outputs';
import { OutputDispatcher } from '../outputs/dispatcher';
import { openStore } from '../store/open-store';
import type { Store } from '../store/store';
import { createStorageHealth, guardStore, isStorageUnavailable } from '../store/health';
import { withMemoryCache } from '../store/image-memory-cache';
import { VERSION } from '../version';
import { RecordsInProgress } from '../pipeline/record-updates';
import { SongRequests } from '../pipeline/song-requests';
import { IcecastPoller } from '../pipeline/icecast-poller';
import { ListenerSessions } from '../pipeline/listener-sessions';
import { PlayLog } from '../pipeline/play-log';
import { startIcecastListener, type IcecastListenerOptions, type RunningIcecastListener, type SubmitFields } from '../ingest/listener';
import { followOtherInstances } from '../server/other-instances';
import { CurrentImages } from '../server/current-images';
import { idempotent as idempotentWrites } from '../server/middleware/idempotency';
import { reportFailedAuthentication } from '../server/middleware/auth-throttle';
import { QueueBudget } from '../server/queue-budget';
import { createEventStream } from '../server/sse/event-stream';
import { createWorkPool } from '../server/work-pool';
import type { Storage, Work } from '../server/parts';
import { isLoopbackHost } from '../server/request-guards';
import { startServer, type RunningServer, type ServerOptions } from '../server/start';
import os from 'node:os';

// The composition root (docs/architecture.md "Layout"): reads nothing but the config it is
// given, opens the store, builds each use case once, and starts the HTTP server and the Icecast
// source listener, handing each the narrow part it needs. Nothing below returns its internals
// for someone else to wire.

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
  ws?: ServerOptions['ws'];
  /** The Icecast source listener: tests use a short idle time or small memory bounds. */
  icecast?: Partial<
    Pick<IcecastListenerOptions, 'idleTimeoutMs' | 'maxConnections' | 'maxConnectionsPerAddress' | 'sourceMemoryBytes' | 'totalSourceMemoryBytes'>
  >;
}

export interface RunningApp {
  url: string;
  port: number;
  /** The Icecast source listener, when `icecastSource.port` is set (docs/dj-software.md). */
  icecast: RunningIcecastListener | null;
  /** Sources first, then the HTTP server (which waits for the submissions in flight), then the background work and the database. */
  close(): Promise<void>;
}

/** The parts the root builds, before anything listens: `startApp` starts them; a test harness may hold them. */
export interface ComposedApp {
  storage: Storage;
  work: Work;
  start(): Promise<RunningApp>;
}

export async function startApp(config: FrozenConfig, options: StartOptions = {}): Promise<RunningApp> {
  return (await composeApp(config, options)).start();
}

export async function composeApp(config: FrozenConfig, options: StartOptions = {}): Promise<ComposedApp> {
  const logger = options.logger ?? createLogger();
  const storage = await openStorage(config, logger);
  const work = createWork(config, options, storage, logger);
  const closeBackground = async () => {
    // The background image downloads: abandoned, and waited for, before the database closes.
    await work.images.close();
    work.stopFollowing();
    // Deliveries under way are cut short and stay pending in the store for the next start.
    await work.outputs.close();
    await work.poller.close();
    await work.playLog.close();
    await storage.store.close();
  };
  const start = async (): Promise<RunningApp> => {
    let server: RunningServer;
    try {
      server = await startServer(config, storage, work, { logger, ...(options.ws ? { ws: options.ws } : {}) });
    } catch (error) {
      await closeBackground();
      throw error;
    }
    if (!isLoopbackHost(config.host) && config.secret === '') {
      logger.warn(`listening on ${config.host} without a secret: anyone who can reach this port can submit tracks (set --secret or SVC_SECRET)`);
    }
    const icecast = await startIcecastSource(config, work, storage, options, logger).catch(async (error: unknown) => {
      await server.close();
      await closeBackground();
      throw error;
    });
    let closing: Promise<void> | null = null;
    return {
      url: server.url,
      port: server.port,
      icecast,
      close: () =>
        (closing ??= (async () => {
          // Sources first: the server's close then waits for the tracks they were submitting.
          await icecast?.close();
          await server.close();
          await closeBackground();
        })()),
    };
  };
  return { storage, work, start };
}

/** The Icecast source listener, when `icecastSource.port` is set: it gets `submit(fields)` and the shared failed-password count. */
async function startIcecastSource(
  config: FrozenConfig,
  work: Work,
  storage: Storage,
  options: StartOptions,
  logger: Logger,
): Promise<RunningIcecastListener | null> {
  const { port, password } = config.icecastSource;
  if (port === undefined) return null;
  // Without a password any web page or LAN client could set the track through this port:
  // start-up stops and says what to set (docs/security.md "Icecast sources").
  return startIcecastListener({
    host: config.host,
    port,
    password: password ?? config.secret,
    submit: sourceSubmitter(work, storage),
    sourceGone: (channel) => work.playLog.end(channel, 'source_disconnect'),
    logger,
    authentication: { throttle: work.authThrottle, report: work.reportFailedAuthentication },
    ...options.icecast,
  });
}

/**
 * Tracks from a source client go through the same use case as POST /v1/remoteinput. The
 * listener has checked the source's password already, so the pipeline's own secret check is not
 * asked again; the server's shutdown waits for the submission.
 */
function sourceSubmitter(work: Work, storage: Storage): SubmitFields {
  const deps: SubmitDeps = { ...work.submitDeps, secret: '' };
  return async (fields) => {
    const receivedSeq = await storage.tracks.nextReceivedSeq();
    return work.trackInFlight(submitTrack({ method: 'POST', query: {}, body: fields, authHeader: '' }, receivedSeq, deps));
  };
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
  const tracks = guardStore(plainTracks, health, ['insert', 'updateMetadata', 'correct', 'remove'], ['nextReceivedSeq']);
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
          // As /v1/last shows it, play fields included: its air time, kind and listeners.
          return record ? { data: recordJson(record), receivedAtMs: Date.parse(record.receivedAt) } : undefined;
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
  const { playLog, listenerSessions, poller } = createPlayLog(config, store, logger, nowPlaying);
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
  const queueBudget = new QueueBudget(config.limits.maxQueuedBytes);
  // History pages, SSE replays, ...: a few at a time, fair between addresses (docs/limits-and-load.md).
  const expensiveWork = createWorkPool();
  const events = createEventStream({ nowPlaying, tracks, budget: queueBudget, pool: expensiveWork, logger });
  songRequests.on('added', (request) => events.announce('request.added', request));
  songRequests.on('removed', (request) => events.announce('request.removed', request));
  return {
    events,
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
    queueBudget,
    expensiveWork,
    currentImages: new CurrentImages({ nowPlaying, store: imageStore, announcements: images }),
    playLog,
    listenerSessions,
    poller,
  };
}

/** The play log's background work: planned ends and listener counts, and the Icecast listener feeds. */
function createPlayLog(config: FrozenConfig, store: Store, logger: Logger, nowPlaying: NowPlaying): Pick<Work, 'playLog' | 'listenerSessions' | 'poller'> {
  const { playlog } = config;
  const listenerSessions: ListenerSessions = new ListenerSessions({
    plays: store.plays,
    servers: playlog.icecast,
    keepAddresses: playlog.keepAddresses,
    logger,
    // Called only once the feeds run, after playLog below exists.
    onLateSession: (channel: string, since: string): Promise<void> => playLog.recount(channel, since),
  });
  const playLog: PlayLog = new PlayLog({
    plays: store.plays,
    policy: playlog,
    logger,
    countsListeners: listenerSessions.configured,
    complement: playlog.complement,
    minSessionSeconds: playlog.minSessionSeconds,
    // An end or a count of the current track shows on /v1/last and the streams at once.
    onPlaysChanged: async (dbids) => {
      const shown = nowPlaying.current();
      if (!shown || !dbids.includes(shown.dbid)) return;
      const fresh = await store.tracks.byDbid(shown.dbid);
      if (fresh?.play && nowPlaying.current()?.dbid === fresh.dbid) nowPlaying.update({ ...shown, play: fresh.play });
    },
  });
  const poller = new IcecastPoller({ servers: playlog.icecast, sessions: listenerSessions, plays: store.plays, logger });
  playLog.start();
  poller.start();
  return { playLog, listenerSessions, poller };
}

/** A name that stays the same across restarts (a retained MQTT topic per name): the host and port, or the process without a fixed port. */
function instanceName(port: number): string {
  return `${os.hostname()}-${port === 0 ? `pid${process.pid}` : port}`;
}
