import type { FrozenConfig } from '../config/schema';
import { recordJson } from '../domain/play';
import type { EnrichmentPlan } from '../enrich/enricher';
import type { SubmitDeps } from '../pipeline/submit-track';
import { fieldsSubmitter, heardFromSource } from '../pipeline/submit-fields';
import { createInFlight } from '../pipeline/in-flight';
import { submissionCounter } from '../pipeline/submission-counter';
import { buildEnrichmentPlan } from '../enrich/build-plan';
import type { LimiterClock } from '../enrich/rate-limit';
import { ServiceHealth } from '../enrich/service-health';
import { createLogger, throttledLog, type Logger } from '../log';
import { ImageCollector } from '../images/collector';
import { createImageFetcher, type ImageFetcherOptions } from '../images/fetch-image';
import { ChannelNowPlaying, MAX_CHANNEL_VIEWS } from '../domain/channel-now-playing';
import { audienceServers, channelRules, channelsWithAudience, unheardChannels } from '../domain/channels';
import { AuthThrottle, type AuthThrottleOptions } from '../domain/auth-throttle';
import { CoversInFlight } from '../domain/covers-in-flight';
import { createOutputs } from '../outputs/create-outputs';
import { OutputDispatcher } from '../outputs/dispatcher';
import { openStore } from '../store/open-store';
import type { SchemaVersion, Store, StoreOptions } from '../store/store';
import { createStorageHealth, guardStore, storageFailureKind, storageFix } from '../store/health';
import { isPostgresUrl } from '../store/store';
import { withoutPassword } from '../store/postgres/connection';
import { StartupError, errorMessage } from '../errors';
import { withMemoryCache } from '../store/image-memory-cache';
import { VERSION } from '../version';
import { RecordsInProgress, type UpdateClock } from '../pipeline/record-updates';
import { SongRequests } from '../requests/song-requests';
import { addressKeyFrom } from '../playlog/listener-sessions';
import type { ListenerSessions } from '../playlog/listener-sessions';
import type { PlayLog } from '../playlog/play-log';
import { startPlayLog } from '../playlog/start-play-log';
import { fetchListClients } from '../playlog/listclients-fetch';
import { startIcecastListener, type IcecastListenerOptions, type RunningIcecastListener, type SubmitFields } from '../ingest/listener';
import { followOtherInstances } from './other-instances';
import { serverPorts } from './server-ports';
import { CurrentImages } from '../server/read-models/current-images';
import { idempotent as idempotentWrites } from '../server/middleware/idempotency';
import { reportFailedAuthentication } from '../server/middleware/auth-throttle';
import { QueueBudget } from '../server/guards/queue-budget';
import { createEventStream } from '../server/streams/sse/event-stream';
import { createWorkPool } from '../server/guards/work-pool';
import type { Storage, Work } from './parts';
import { startServer, type RunningServer, type ServerOptions } from '../server/start';
import { addToLibrary, listLibrary, removeFromLibrary, type LibraryDeps } from '../recognition/library';
import { Recognition, type RecognitionOptions } from '../recognition/recognition';
import { createOnlineIdentifier } from '../recognition/online-lookups';
import { DEFAULT_SEARCH } from '../recognition/fingerprint-index';
import { DEFAULT_TRACKER } from '../recognition/title-tracker';
import { doublingBackoff, startPulledStreams, type RunningPulledStreams } from '../recognition/pulled-streams';
import { createPrometheusMetrics } from '../server/metrics';
import { NO_METRICS, type MetricsPort } from '../metrics';
import os from 'node:os';
import path from 'node:path';

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
  /** Outputs: the clock of the queues' retries and holds (Date.now); tests move it by hand past a Retry-After or a backoff. */
  outputClock?: () => number;
  /** PostgreSQL: the silence checks' interval and time limit (store/postgres/liveness.ts); tests use short ones. */
  storeLiveness?: StoreOptions['liveness'];
  /** A record's update spacing (250 ms, pipeline/record-updates.ts): tests move its clock by hand. */
  updateClock?: UpdateClock;
  /** Enrichment: the clock of the request spacing and the Retry-After pauses; tests move it by hand. */
  enrichmentClock?: LimiterClock;
  /** Failed secrets (docs/security.md "Guessing the secret"): tests use short delays and their own clock. */
  authThrottle?: AuthThrottleOptions;
  /** /v1/images/ws: tests use a short ping interval or a small per-client buffer. */
  ws?: ServerOptions['ws'];
  /** The idle-heap watcher: tests use a short quiet time and watch its decisions. */
  idleHeap?: ServerOptions['idleHeap'];
  /** The connection caps: tests make a silent connection old enough to be closed without waiting a second. */
  connections?: ServerOptions['connections'];
  /** Recognition: tests that send a file faster than it plays decode it at once, and set the reconnect waits. */
  recognition?: { realTime?: boolean; backoffMs?: (attempt: number) => number; idleMs?: number };
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
  /** The backend and the schema version its database is at (the start-up banner). */
  schema: SchemaVersion;
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
  const storage = await openStorage(config, logger, options.storeLiveness);
  // docs/running.md "Metrics": off unless configured; the parts count into the port either way.
  const metrics = config.metrics.enabled ? createPrometheusMetrics() : undefined;
  const work = createWork(config, options, storage, logger, metrics?.port ?? NO_METRICS);
  const closeBackground = async () => {
    // The background image downloads: abandoned, and waited for, before the database closes.
    await work.images.close();
    work.stopFollowing();
    // Deliveries under way are cut short and stay pending in the store for the next start.
    await work.outputs.close();
    await work.poller.close();
    await work.playLog.close();
    work.recognition.close();
    await storage.store.close();
  };
  const start = async (): Promise<RunningApp> => {
    let server: RunningServer;
    try {
      server = await startServer(serverPorts(config, storage, work, logger, metrics), {
        logger,
        ...(options.ws ? { ws: options.ws } : {}),
        ...(options.idleHeap ? { idleHeap: options.idleHeap } : {}),
        ...(options.connections ? { connections: options.connections } : {}),
      });
    } catch (error) {
      await closeBackground();
      throw error;
    }
    const pulled = await startRecognition(config, work, options, logger);
    const icecast = await startIcecastSource(config, work, storage, options, logger).catch(async (error: unknown) => {
      pulled?.close();
      await server.close();
      await closeBackground();
      throw error;
    });
    let closing: Promise<void> | null = null;
    return {
      url: server.url,
      port: server.port,
      icecast,
      schema: storage.store.schema,
      close: () =>
        (closing ??= (async () => {
          // Sources first: the server's close then waits for the tracks they were submitting.
          await icecast?.close();
          pulled?.close();
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
  // A mount a declared channel lists as its ingest is that channel (docs/channels.md "Declaring channels").
  const rules = channelRules(config.channels);
  const channelOf = (mount: string) => rules.resolve(mount).channel;
  return startIcecastListener({
    host: config.host,
    port,
    password: password ?? config.secret,
    submit: heardFromSource(
      fieldsSubmitter(work.submitDeps, storage.tracks.nextReceivedSeq.bind(storage.tracks), work.trackInFlight),
      work.recognition,
      channelOf,
    ),
    sourceGone: (mount) => work.playLog.end(channelOf(mount), 'source_disconnect'),
    ...(config.recognition.enabled
      ? {
          // Each source's audio is listened to on its mount's channel (docs/recognition.md "Listening").
          audio: (mount: string) =>
            work.recognition.listen(
              `icecast:${mount}`,
              channelOf(mount),
              config.recognition.vinylChannels.includes(mount) || config.recognition.vinylChannels.includes(channelOf(mount)),
            ),
        }
      : {}),
    logger,
    authentication: { throttle: work.authThrottle, report: work.reportFailedAuthentication },
    ...options.icecast,
  });
}

/** Loads the library's index, and with `recognition.enabled` connects to the pulled streams. */
async function startRecognition(config: FrozenConfig, work: Work, options: StartOptions, logger: Logger): Promise<RunningPulledStreams | null> {
  await work.recognition.reload().catch((error: unknown) => logger.error(`recognition: cannot read the library: ${errorMessage(error)}`));
  if (!config.recognition.enabled) return null;
  logger.info(`recognition: ${work.recognition.librarySize()} library tracks indexed`);
  if (config.recognition.streams.length === 0) return null;
  const rules = channelRules(config.channels);
  return startPulledStreams({
    // A stream a declared channel lists as its ingest is that channel's (docs/channels.md "Declaring channels").
    streams: config.recognition.streams.map((stream) => {
      const owner = rules.resolve(stream.url);
      return rules.declared && owner.warning === undefined ? { ...stream, channel: owner.channel } : stream;
    }),
    recognition: work.recognition,
    logger,
    backoffMs: options.recognition?.backoffMs ?? doublingBackoff(config.recognition.reconnectMaxSeconds * 1000),
    idleMs: options.recognition?.idleMs ?? 15_000,
  });
}

/** The recognition and its library: adds one at a time, the index read again after each change. */
function createRecognition(
  config: FrozenConfig,
  options: StartOptions,
  store: Store,
  logger: Logger,
  submit: SubmitFields,
  playLog: PlayLog,
  metrics: MetricsPort,
): Pick<Work, 'recognition' | 'library'> {
  const settings = config.recognition;
  const online = settings.enabled ? onlineLookupsOf(config, logger) : undefined;
  const recognition = new Recognition(
    { library: store.library, submit, end: (channel) => playLog.end(channel, 'explicit'), logger, metrics },
    {
      tools: settings.tools,
      windowSeconds: settings.windowSeconds,
      search: { ...DEFAULT_SEARCH, maxBitError: settings.maxBitError },
      tracker: { ...DEFAULT_TRACKER, clearAfter: settings.clearAfterWindows },
      sourceHoldMs: settings.sourceHoldSeconds * 1000,
      vinyl: settings.vinylSearch,
      ...(options.recognition?.realTime === false ? { realTime: false } : {}),
      ...(online ? { online } : {}),
    },
  );
  const deps: LibraryDeps = { store: store.library, tools: settings.tools, changed: () => void recognition.reload().catch(() => undefined) };
  let adding: Promise<unknown> = Promise.resolve();
  return {
    recognition,
    library: {
      add: (paths, onEvent) => {
        const run = adding.then(() => addToLibrary(deps, paths, onEvent));
        adding = run.catch(() => undefined);
        return run;
      },
      list: () => listLibrary(deps),
      remove: (selector) => removeFromLibrary(deps, selector),
    },
  };
}

/** The online lookups `recognition.online` asks for, or none (said once in the log): no service, no key. */
function onlineLookupsOf(config: FrozenConfig, logger: Logger): NonNullable<RecognitionOptions['online']> | undefined {
  const settings = config.recognition.online;
  const made = createOnlineIdentifier(settings, config.recognition.tools, `svc/${VERSION}`);
  if ('off' in made) {
    if (settings.service !== '') logger.warn(`recognition: no online lookups: ${made.off} (recognition.online.apiKey)`);
    return undefined;
  }
  logger.info(`recognition: tracks the library does not know are looked up at ${settings.service}, once per play`);
  return { identifier: made.identifier, sampleSeconds: made.sampleSeconds, retryAfterSeconds: settings.retryAfterSeconds, holdSeconds: settings.holdSeconds };
}

/** Opens the store, probes that it takes writes, and reads the current track; closes it again on failure. */
/** Most records one gap below a new record is filled with (NowPlaying's `between`); a longer gap is a catch-up's. */
const GAP_READ_LIMIT = 500;

async function openStorage(config: FrozenConfig, logger: Logger, liveness: StoreOptions['liveness']): Promise<Storage> {
  // A lost database drops every pooled connection at once: one line per kind of news per minute.
  const reportConnection = throttledLog((message) => logger.warn(message));
  const store = await openStore(config.database.location, {
    maxImageBytes: config.images.maxTotalBytes,
    poolSize: config.database.poolSize,
    listenUrl: config.database.listenUrl,
    ...(liveness ? { liveness } : {}),
    onConnectionProblem: (message) => reportConnection(message.includes('restored') ? 'restored' : 'lost', message),
    // An upgrade of an existing database is worth one line (docs/running.md "Upgrades"): a
    // backup taken before it is of the old version. A new database is not news.
    onMigrated: (fromVersion, toVersion) => {
      if (fromVersion > 0) logger.info(`database schema upgraded from version ${fromVersion} to ${toVersion}`);
    },
  });
  const where = describeLocation(config.database.location);
  const health = createStorageHealth(logger, Date.now, where);
  // A database that takes no writes at start stops the start (exit 1, docs/running.md "When the
  // database fails"): a supervisor sees a failed unit instead of a server that stores nothing.
  try {
    await store.probeWrite();
  } catch (error) {
    await store.close();
    throw unwritableAtStart(where, error);
  }
  // The server works through guarded stores; RunningServer hands out the plain ones.
  const plainTracks = store.tracks;
  // The arrival number is the first write of a submission: with the connection lost it fails at once too.
  const tracks = guardStore(plainTracks, health, ['insert', 'updateMetadata', 'correct', 'remove'], ['nextReceivedSeq']);
  let nowPlaying: ChannelNowPlaying;
  try {
    nowPlaying = new ChannelNowPlaying(await tracks.current(), await tracks.currentPerChannel(MAX_CHANNEL_VIEWS), {
      // The records another instance stored below one of this instance's own (or announced out of order).
      between: async (after, before) => (await tracks.since(after, Math.min(GAP_READ_LIMIT, before - after - 1))).filter((record) => record.dbid < before),
      // A channel's records below one of its own not seen yet (dbids of one channel commit in order).
      betweenOn: async (channel, after, before) =>
        (await tracks.since(after, Math.min(GAP_READ_LIMIT, before - after - 1), channel)).filter((record) => record.dbid < before),
      onGapError: (error) => logger.warn(`records before a new one not read (live readers may miss them): ${errorMessage(error)}`),
      currentOn: async (channel) => (await tracks.currentPerChannel(1, channel))[0] ?? null,
      onReadError: (error) => logger.warn(`a channel's current track not read after a deletion: ${errorMessage(error)}`),
    });
    // A declared channel has its view (its streams and outputs) before its first play.
    for (const name of channelRules(config.channels).names) nowPlaying.channel(name, true);
  } catch (error) {
    await store.close();
    throw error;
  }
  const plainImageStore = store.images;
  // Reads of image bytes are served from memory above the guarded store (covers at audience scale).
  const imageStore = withMemoryCache(guardStore(plainImageStore, health, ['put', 'link', 'rememberUrl']), config.images.memoryCacheBytes);
  return { store, health, tracks, imageStore, plainTracks, plainImageStore, nowPlaying };
}

/** A file as an absolute path, a URL without its password: how the log and the start-up errors name the database. */
function describeLocation(location: string): string {
  if (location === ':memory:') return location;
  return isPostgresUrl(location) ? withoutPassword(location) : path.resolve(location);
}

function unwritableAtStart(where: string, error: unknown): Error {
  const kind = storageFailureKind(error);
  if (kind === undefined) return error instanceof Error ? error : new Error(String(error));
  const fix = storageFix(kind) ?? 'make it take writes';
  return new StartupError(`database ${where} takes no writes (${kind}: ${errorMessage(error)}): ${fix}, then start svc again`);
}

/** The outputs and their dispatcher (docs/outputs.md), sending from the plain image store. */
function createOutputDispatcher(config: FrozenConfig, options: StartOptions, storage: Storage, logger: Logger, metrics: MetricsPort): OutputDispatcher {
  const { store, tracks, plainImageStore, nowPlaying } = storage;
  return new OutputDispatcher({
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
    metrics,
    channels: new Map(config.outputs.flatMap((output) => (output.channel === undefined ? [] : [[output.name, output.channel] as const]))),
    retryForSeconds: new Map(config.outputs.map((output) => [output.name, output.retryForSeconds ?? 86_400])),
    // A record's enrichment ends by its deadline; the second covers its last write.
    holdMs: (config.enrichment.deadlineSeconds + 1) * 1000,
    delaySeconds: new Map(config.outputs.map((output) => [output.name, output.delay])),
    ...(options.outputPollMs === undefined ? {} : { pollMs: options.outputPollMs }),
    ...(options.outputMaxAttempts === undefined ? {} : { maxAttemptsPerMessage: options.outputMaxAttempts }),
    ...(options.outputClock === undefined ? {} : { now: options.outputClock }),
  });
}

function createWork(config: FrozenConfig, options: StartOptions, storage: Storage, logger: Logger, metrics: MetricsPort): Work {
  const { store, health, tracks, imageStore, nowPlaying } = storage;
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
  const outputs = createOutputDispatcher(config, options, storage, logger, metrics);
  const { inFlight, trackInFlight } = createInFlight();
  // Outside services that failed lately: skipped for a while, and named by /v1/status.
  const serviceHealth = new ServiceHealth(Date.now, undefined, metrics);
  const planDeps = { lookupCache: store.lookupCache, requestSlots: store.requestSlots, serviceHealth, logger };
  const songRequests = new SongRequests(store.songRequests, logger);
  const { playLog, listenerSessions, poller } = startPlayLog({
    // docs/channels.md "Declaring channels": the declared channels' mounts join playlog.icecast's.
    settings: { ...config.playlog, icecast: audienceServers(config.playlog.icecast, config.channels) },
    plays: store.plays,
    tracks: store.tracks,
    nowPlaying,
    logger,
    fetchListClients,
    addressKey: addressKeyFrom(config.secret),
  });
  const submitDeps: SubmitDeps = {
    counted: submissionCounter(metrics),
    secret: config.secret,
    maxFields: config.limits.maxFields,
    maxFieldLength: config.maxFieldLength,
    maxListItems: config.limits.maxListItems,
    maxRecordBytes: config.limits.maxRecordBytes,
    ...(options.updateClock ? { updateClock: options.updateClock } : {}),
    processingTimeoutSeconds: config.processingTimeoutSeconds,
    enrichmentDeadlineSeconds: config.enrichment.deadlineSeconds,
    dedupeSeconds: config.dedupeSeconds,
    inProgress: new RecordsInProgress(),
    coversInFlight: new CoversInFlight(),
    // A new track fulfils the song request it matches (docs/song-requests.md).
    ...(config.requests.enabled ? { songRequests } : {}),
    plan: options.plan ?? buildEnrichmentPlan(config, { ...planDeps, limiterClock: options.enrichmentClock }),
    tracks,
    nowPlaying,
    logger,
    images,
    playLog,
    channels: channelRules(config.channels),
    currentOn: nowPlaying.currentOn.bind(nowPlaying),
  };
  // A first request ends within the processing budget (408 frees its key), so a key still
  // unanswered 5 s past it belongs to an instance that died: a repeat waits that long, then runs.
  const idempotencyLeaseMs = (config.processingTimeoutSeconds + 5) * 1000;
  const queueBudget = new QueueBudget(config.limits.maxQueuedBytes);
  // A recognised play is a submission (docs/recognition.md "A recognised play"), as a source's is.
  const recognitionParts = createRecognition(
    config,
    options,
    store,
    logger,
    fieldsSubmitter(submitDeps, tracks.nextReceivedSeq.bind(tracks), trackInFlight),
    playLog,
    metrics,
  );
  // Any other title on a channel holds it against recognition (an HTTP submission, another instance's).
  nowPlaying.on('track-changed', (record) => {
    if (record.metadata.recognition === undefined && record.play) recognitionParts.recognition.sourceTitled(record.play.channel);
  });
  // History pages, SSE replays, ...: a few at a time, fair between addresses (docs/limits-and-load.md).
  const expensiveWork = createWorkPool();
  const events = createEventStream({ nowPlaying, tracks, budget: queueBudget, pool: expensiveWork, logger });
  registerGauges(metrics, outputs, listenerSessions);
  songRequests.on('added', (request) => events.announce('request.added', request));
  songRequests.on('removed', (request) => events.announce('request.removed', request));
  return {
    events,
    songRequests,
    authThrottle: new AuthThrottle(options.authThrottle),
    reportFailedAuthentication: reportFailedAuthentication(logger),
    // Guarded like the tracks: a lost database answers 503 (at once while it is known lost), never a 500.
    idempotent: idempotentWrites(guardStore(store.idempotency, health, ['claim', 'answer', 'forget']), {
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
    ...recognitionParts,
    unheardChannels: unheardChannelsOf(config, nowPlaying),
  };
}

/** docs/channels.md "No silent zeros": where listeners are counted at all, the channels on air that no audience mount feeds. */
function unheardChannelsOf(config: FrozenConfig, nowPlaying: ChannelNowPlaying): () => ReturnType<typeof unheardChannels> {
  const servers = audienceServers(config.playlog.icecast, config.channels);
  if (servers.length === 0 && config.channels.length === 0) return () => [];
  const heard = channelsWithAudience(servers);
  return () =>
    unheardChannels(
      nowPlaying.channelNames().flatMap((channel) => {
        const record = nowPlaying.currentOn(channel);
        return record?.play ? [{ channel, dbid: record.dbid, ended: record.play.endedAt !== null }] : [];
      }),
      heard,
    );
}

/** The scrape-time readings: each output's queue and superseded messages, and the listeners per channel. */
function registerGauges(metrics: MetricsPort, outputs: OutputDispatcher, listenerSessions: ListenerSessions): void {
  const statuses = () => outputs.status();
  metrics.gauge('svc_output_queue_length', 'Messages waiting for delivery, per output.', ['output'], async () =>
    (await statuses()).map((status) => [{ output: status.name }, status.pending] as const),
  );
  metrics.gauge('svc_output_superseded', 'Messages a newer track replaced before delivery, per output.', ['output'], async () =>
    (await statuses()).map((status) => [{ output: status.name }, status.superseded] as const),
  );
  metrics.gauge('svc_listeners', 'Listener sessions open now on the Icecast servers svc counts (playlog.icecast), per channel.', ['channel'], async () =>
    [...(await listenerSessions.listenersPerChannel())].map(([channel, count]) => [{ channel }, count] as const),
  );
}

/** A name that stays the same across restarts (a retained MQTT topic per name): the host and port, or the process without a fixed port. */
function instanceName(port: number): string {
  return `${os.hostname()}-${port === 0 ? `pid${process.pid}` : port}`;
}
