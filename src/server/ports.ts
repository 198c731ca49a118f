import type { ChannelRules } from '../domain/channels';
import type { ChannelNowPlaying } from '../domain/channel-now-playing';
import type { AuthThrottle } from '../domain/auth-throttle';
import type { CoversInFlight } from '../domain/covers-in-flight';
import type { ImageCollector } from '../images/collector';
import type { SongRequests } from '../requests/song-requests';
import type { MemoryCachedImageStore } from '../store/image-memory-cache';
import type { TrackStore } from '../store/tracks';
import type { ConnectionLimits } from './guards/connection-limits';
import type { QueueBudget } from './guards/queue-budget';
import type { WorkPool } from './guards/work-pool';
import type { reportFailedAuthentication } from './middleware/auth-throttle';
import type { CurrentImages } from './read-models/current-images';
import type { CurrentImageDeps } from './routes/current-images';
import type { HistoryDeps } from './routes/history';
import type { IcecastListenerDeps } from './routes/icecast-listeners';
import type { TextAnswers } from './routes/last-text';
import type { LibraryRoutesDeps } from './routes/library';
import type { ListenerRoutesDeps } from './routes/listeners';
import type { MetricsDeps } from './routes/metrics';
import type { OutputRoutesDeps } from './routes/outputs';
import type { RecountRoutesDeps } from './routes/recount';
import type { ReportRoutesDeps } from './routes/reports';
import type { RequestRoutesDeps } from './routes/requests';
import type { V1Deps } from './routes/v1';
import type { EventStream } from './streams/sse/event-stream';
import type { SharedBlobs } from './streams/stream-reply';

// What the HTTP server is handed by the composition root (src/app/start-app.ts, built in
// src/app/server-ports.ts): its own settings, one route-ready port per router, the parts its push
// streams show and the submissions it waits for. The server reads no config and builds no use
// case; it adds only what it owns itself (its streams, its shutdown state, its middleware).

/** The settings the server itself uses: listening, its request policies, its connection limits. */
export interface ServerSettings {
  host: string;
  port: number;
  /** `staticDir`: checked before listening (routes/static-files.ts). */
  staticDir: string;
  corsOrigins: readonly string[];
  allowedHosts: readonly string[];
  writeOrigins: readonly string[];
  trustProxy: readonly string[];
  limits: ConnectionLimits & { headersTimeoutSeconds: number; maxQueuedBytes: number };
  /** The processing budget a request body is read within (docs/limits-and-load.md "Connections"). */
  processingTimeoutSeconds: number;
  /** `mdns.advertise` (docs/whats-now-playing.md "Found on the network"). */
  advertise: boolean;
}

/** The shared secret and the failed-password count every door shares (docs/security.md "Guessing the secret"). */
export interface AuthenticationPort {
  secret: string;
  throttle: AuthThrottle;
  report: ReturnType<typeof reportFailedAuthentication>;
}

/** What the push streams (/v1/images/ws, /wsstream, /wsartistfanartstream, GET /v1/events) show, per channel view. */
export interface StreamPorts {
  nowPlaying: ChannelNowPlaying;
  channels: ChannelRules;
  tracks: Pick<TrackStore, 'since' | 'history' | 'version'>;
  imageStore: Pick<MemoryCachedImageStore, 'find' | 'meta' | 'slice'>;
  images: ImageCollector;
  /** The one event stream of this process (the default view's). */
  events: EventStream;
  songRequests: Pick<SongRequests, 'on'>;
  budget: QueueBudget;
  pool: WorkPool;
  current: CurrentImages;
  /** A cover being fetched for a submission: the hub waits for it up to the enrichment deadline. */
  coversInFlight?: CoversInFlight;
  enrichmentDeadlineSeconds: number;
  /** The `wsstream` settings (docs/configuration.md). */
  wsstream: { complete: boolean; completeWaitSeconds: number; coverForNoThumbs: boolean; fanartSeconds: number };
}

/** One port per router, each as the router takes it; the server adds the views of its own streams. */
export interface RouterPorts {
  v1: Omit<V1Deps, 'nowPlaying' | 'channels'>;
  icecastListeners: IcecastListenerDeps;
  history: HistoryDeps;
  outputs: OutputRoutesDeps;
  library: LibraryRoutesDeps;
  reports: ReportRoutesDeps;
  listeners: ListenerRoutesDeps;
  recount: RecountRoutesDeps;
  cover: { store: MemoryCachedImageStore; blobs: SharedBlobs };
  currentImages: Omit<CurrentImageDeps, 'nowPlaying' | 'channels'>;
  /** /v1/last.txt and /index.txt, shared with the /v1/last fast path. */
  text: TextAnswers;
  /** GET /v1/health/ready: whether the database takes writes (the server adds its shutdown). */
  health: { databaseOk: () => boolean };
  requests: RequestRoutesDeps;
  /** GET /metrics, when `metrics.enabled`; the server also counts every answer into its registry. */
  metrics?: MetricsDeps;
}

export interface ServerPorts {
  settings: ServerSettings;
  authentication: AuthenticationPort;
  routes: RouterPorts;
  streams: StreamPorts;
  /** Submissions under way, waited for on shutdown. */
  inFlight: ReadonlySet<Promise<unknown>>;
}
