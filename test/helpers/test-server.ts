import path from 'node:path';
import { deepMerge } from '../../src/domain/plain-object';
import { expandShorthands } from '../../src/config/load';
import { configSchema, type Config, type FrozenConfig } from '../../src/config/schema';
import type { AuthThrottle } from '../../src/domain/auth-throttle';
import type { EnrichmentPlan } from '../../src/enrich/enricher';
import { createLogger } from '../../src/log';
import { composeApp, type RunningApp, type StartOptions } from '../../src/app/start-app';
import type { ImageCollector } from '../../src/images/collector';
import type { PlayLog } from '../../src/playlog/play-log';
import type { EventStream } from '../../src/server/streams/sse/event-stream';
import type { ImageStore } from '../../src/store/images';
import type { PlayLogStore } from '../../src/store/plays';
import type { TrackStore } from '../../src/store/tracks';
import { makeTempDir } from './temp-dir';

export type DeepPartial<T> = T extends readonly (infer U)[] ? readonly U[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/**
 * The running app and the parts a test looks at, held by this harness as the composition root
 * built them (src/app/start-app.ts composeApp): the plain stores, the image collector, the event
 * stream and the play log. Production code hands none of them out.
 */
export interface HarnessedServer extends RunningApp {
  tracks: TrackStore;
  imageStore: ImageStore;
  images: ImageCollector;
  events: EventStream;
  plays: PlayLogStore;
  playLog: PlayLog;
  /** The failed-secret throttle every door shares (docs/security.md "Guessing the secret"). */
  authThrottle: AuthThrottle;
}

export interface TestServer {
  url: string;
  server: HarnessedServer;
  config: FrozenConfig;
  /** Every line the server logged. */
  logs: string[];
  dbFile: string;
  dataDir: string;
  /** Stops the server (if running) and removes its data directory. */
  close(): Promise<void>;
  /** Stops the server, keeping its database and port for `restart`. */
  stop(): Promise<void>;
  /** Stops (if running) and starts again on the same database and port. */
  restart(): Promise<void>;
}

export interface TestServerOptions {
  config?: DeepPartial<Config>;
  plan?: EnrichmentPlan;
  /** Reuse a database file (e.g. across a restart); defaults to a new temp dir. */
  dbFile?: string;
  imageFetch?: StartOptions['imageFetch'];
  ws?: StartOptions['ws'];
  outputPollMs?: number;
  outputMaxAttempts?: number;
  outputClock?: StartOptions['outputClock'];
  authThrottle?: StartOptions['authThrottle'];
  enrichmentClock?: StartOptions['enrichmentClock'];
  icecast?: StartOptions['icecast'];
  idleHeap?: StartOptions['idleHeap'];
  connections?: StartOptions['connections'];
  storeLiveness?: StartOptions['storeLiveness'];
  updateClock?: StartOptions['updateClock'];
}

/** Starts the app as `svc serve` does, keeping the parts tests look at. */
export async function startHarnessed(config: FrozenConfig, options: StartOptions): Promise<HarnessedServer> {
  const composed = await composeApp(config, options);
  const running = await composed.start();
  const { storage, work } = composed;
  return {
    ...running,
    tracks: storage.plainTracks,
    imageStore: storage.plainImageStore,
    images: work.images,
    events: work.events,
    plays: storage.store.plays,
    playLog: work.playLog,
    authThrottle: work.authThrottle,
  };
}

/** Config for tests: embedded defaults, port 0, a temp database, no outbound enrichment. */
export function testConfig(overrides: DeepPartial<Config>, dbFile: string): FrozenConfig {
  const base = configSchema.getDefault() as Config;
  // `database: "<path or URL>"` in overrides is the shorthand a config file may use too.
  const merged = deepMerge(deepMerge(base, { port: 0, database: { location: dbFile }, enrichment: { enabled: false } }), expandShorthands(overrides));
  return configSchema.validateSync(merged, { strict: true });
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const temp = makeTempDir();
  const dbFile = options.dbFile ?? path.join(temp.dir, 'svc.db');
  const logs: string[] = [];
  const logger = createLogger((line) => logs.push(line));
  let config = testConfig(options.config ?? {}, dbFile);
  const startOptions = (): StartOptions => ({
    logger,
    plan: options.plan,
    imageFetch: options.imageFetch,
    ws: options.ws,
    outputPollMs: options.outputPollMs,
    outputMaxAttempts: options.outputMaxAttempts,
    outputClock: options.outputClock,
    authThrottle: options.authThrottle,
    enrichmentClock: options.enrichmentClock,
    icecast: options.icecast,
    idleHeap: options.idleHeap,
    connections: options.connections,
    storeLiveness: options.storeLiveness,
    updateClock: options.updateClock,
  });
  let server = await startHarnessed(config, startOptions());
  let running = true;
  const handle: TestServer = {
    url: server.url,
    server,
    config,
    logs,
    dbFile,
    dataDir: temp.dir,
    async close() {
      if (running) await server.close();
      running = false;
      temp.cleanup();
    },
    async stop() {
      if (running) await server.close();
      running = false;
    },
    async restart() {
      // Test requests close their connection (helpers/http.ts), so no pooled socket outlives the old server.
      if (running) await server.close();
      config = testConfig({ ...(options.config ?? {}), port: server.port }, dbFile);
      server = await startHarnessed(config, startOptions());
      running = true;
      handle.server = server;
      handle.config = config;
    },
  };
  return handle;
}

/** Config overrides on top of a base: src/domain/plain-object.ts's merge, re-exported for the helpers that import it from here. */
export { deepMerge };
