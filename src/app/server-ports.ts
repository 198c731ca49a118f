import type { FrozenConfig } from '../config/schema';
import { channelRules } from '../domain/channels';
import type { Logger } from '../log';
import { sessionChannel } from '../playlog/recount';
import { heardChannels, reportSettings, settingsForChannel } from '../reports/settings';
import { snapshotReportSource } from '../reports/store-source';
import type { PrometheusMetrics } from '../server/metrics';
import type { RouterPorts, ServerPorts, ServerSettings, StreamPorts } from '../server/ports';
import { imageBlobs } from '../server/routes/cover';
import { createTextAnswers } from '../server/routes/last-text';
import { VERSION, buildCommit } from '../version';
import type { Storage, Work } from './parts';

// The ports the HTTP server is handed (src/server/ports.ts), cut by the composition root from the
// config, the storage and the use cases it built (the report use case included): each router gets
// exactly what it uses, and the server gets only the settings it uses itself.

export function serverPorts(config: FrozenConfig, storage: Storage, work: Work, logger: Logger, metrics?: PrometheusMetrics): ServerPorts {
  return {
    settings: serverSettings(config),
    authentication: { secret: config.secret, throttle: work.authThrottle, report: work.reportFailedAuthentication },
    routes: routerPorts(config, storage, work, logger, metrics),
    streams: streamPorts(config, storage, work),
    inFlight: work.inFlight,
  };
}

function serverSettings(config: FrozenConfig): ServerSettings {
  return {
    host: config.host,
    port: config.port,
    staticDir: config.staticDir,
    corsOrigins: config.corsOrigins,
    allowedHosts: config.allowedHosts,
    writeOrigins: config.writeOrigins,
    trustProxy: config.trustProxy,
    limits: config.limits,
    processingTimeoutSeconds: config.processingTimeoutSeconds,
    advertise: config.mdns.advertise,
  };
}

function streamPorts(config: FrozenConfig, { nowPlaying, tracks, imageStore }: Storage, work: Work): StreamPorts {
  return {
    nowPlaying,
    channels: channelRules(config.channels),
    tracks,
    imageStore,
    images: work.images,
    events: work.events,
    songRequests: work.songRequests,
    budget: work.queueBudget,
    pool: work.expensiveWork,
    current: work.currentImages,
    ...(work.submitDeps.coversInFlight ? { coversInFlight: work.submitDeps.coversInFlight } : {}),
    enrichmentDeadlineSeconds: work.submitDeps.enrichmentDeadlineSeconds,
    wsstream: config.wsstream,
  };
}

/** The routers' ports, in the order the server tries the routers (src/server/start.ts). */
function routerPorts(config: FrozenConfig, storage: Storage, work: Work, logger: Logger, metrics?: PrometheusMetrics): RouterPorts {
  const { secret, maxBodyBytes } = config;
  const { health, tracks, imageStore, nowPlaying } = storage;
  const blobs = imageBlobs(imageStore, work.queueBudget, work.expensiveWork);
  return {
    v1: {
      version: VERSION,
      commit: buildCommit(),
      schema: storage.store.schema,
      maxBodyBytes,
      unheardChannels: work.unheardChannels,
      tracks,
      databaseState: () => health.state(),
      ...(storage.store.notifications ? { notifications: () => storage.store.notifications?.() ?? 'ok' } : {}),
      failingServices: () => work.serviceHealth.failing(),
      trackInFlight: work.trackInFlight,
      idempotent: work.idempotent,
      submit: work.submitDeps,
      playLog: work.playLog,
      recognition: () => (config.recognition.enabled ? work.recognition.status() : null),
    },
    icecastListeners: { secret, maxBodyBytes, sessions: work.listenerSessions, playLog: work.playLog, logger },
    history: {
      secret,
      tracks,
      nowPlaying,
      pool: work.expensiveWork,
      budget: work.queueBudget,
      idempotent: work.idempotent,
      maxBodyBytes,
      limits: work.submitDeps,
      playLog: work.playLog,
    },
    outputs: { secret, outputs: work.outputs, nowPlaying },
    library: { secret, maxBodyBytes, library: work.library },
    ...recordPorts(config, storage, work),
    cover: { store: imageStore, blobs },
    currentImages: { current: work.currentImages, store: imageStore, blobs, coverForNoThumbs: config.wsstream.coverForNoThumbs },
    text: createTextAnswers(config.pages.idleText),
    health: { databaseOk: () => health.state() === 'ok' },
    requests: { secret, enabled: config.requests.enabled, maxBodyBytes, requests: work.songRequests, version: VERSION },
    ...(metrics ? { metrics: { metrics, secret, requireSecret: config.metrics.requireSecret } } : {}),
  };
}

/** The play log's readers: the report use case, the listener sessions and the recount. */
function recordPorts(config: FrozenConfig, storage: Storage, work: Work): Pick<RouterPorts, 'reports' | 'listeners' | 'recount'> {
  const { secret } = config;
  const plays = storage.store.plays;
  return {
    reports: {
      secret,
      settings: { ...reportSettings(config), ...heardChannels(config) },
      openSource: snapshotReportSource(plays),
      minSessionSeconds: config.playlog.minSessionSeconds,
    },
    listeners: { secret, sessions: plays, openPerChannel: () => work.listenerSessions.listenersPerChannel() },
    recount: {
      secret,
      store: plays,
      // The station's local dates, or a declared channel's own zone (channels[].report.timeZone).
      timeZoneOf: (channel) => settingsForChannel(reportSettings(config), channel).timeZone,
      channelOf: (session) => sessionChannel(work.listenerSessions, session),
      minSessionSeconds: config.playlog.minSessionSeconds,
    },
  };
}
