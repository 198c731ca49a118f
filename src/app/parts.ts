import type { UnheardChannel } from '../domain/channels';
import type { ServiceHealth } from '../enrich/service-health';
import type { ImageCollector } from '../images/collector';
import type { ChannelNowPlaying } from '../domain/channel-now-playing';
import type { AuthThrottle } from '../domain/auth-throttle';
import type { OutputDispatcher } from '../outputs/dispatcher';
import type { SubmitDeps } from '../pipeline/submit-track';
import type { SongRequests } from '../requests/song-requests';
import type { PlayLog } from '../playlog/play-log';
import type { ListenerSessions } from '../playlog/listener-sessions';
import type { IcecastPoller } from '../playlog/icecast-poller';
import type { ImageStore } from '../store/images';
import type { Recognition } from '../recognition/recognition';
import type { Store } from '../store/store';
import type { StorageHealth } from '../store/health';
import type { MemoryCachedImageStore } from '../store/image-memory-cache';
import type { TrackStore } from '../store/tracks';
import type { CurrentImages } from '../server/read-models/current-images';
import type { idempotent as idempotentWrites } from '../server/middleware/idempotency';
import type { reportFailedAuthentication } from '../server/middleware/auth-throttle';
import type { QueueBudget } from '../server/guards/queue-budget';
import type { LibraryRoutesDeps } from '../server/routes/library';
import type { EventStream } from '../server/streams/sse/event-stream';
import type { WorkPool } from '../server/guards/work-pool';

// What the composition root (src/app/start-app.ts) builds before anything listens: the opened
// storage and the use cases, each built once. The server is handed ports cut from them (server-ports.ts).

export /** The opened database, its health, the stores the server works through, and the current track. */
interface Storage {
  store: Store;
  health: StorageHealth;
  /** Guarded: a failing database marks the health and answers 503. */
  tracks: TrackStore;
  imageStore: MemoryCachedImageStore;
  /** The plain stores, beside the guarded ones (the outputs send from the plain image store). */
  plainTracks: TrackStore;
  plainImageStore: ImageStore;
  /** The current track, and each channel's (docs/channels.md "Now playing per channel"). */
  nowPlaying: ChannelNowPlaying;
}

export /** What runs behind the requests: images, outputs, enrichment, other instances, in-flight submissions. */
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
  /** GET /v1/events: the one event stream of this process. */
  events: EventStream;
  /** Recognition of the audio svc receives, and its library (docs/recognition.md). */
  recognition: Recognition;
  /** Channels with a play on air and no audience source (docs/channels.md "No silent zeros"). */
  unheardChannels: () => UnheardChannel[];
  library: LibraryRoutesDeps['library'];
}
