import path from 'node:path';
import { configSchema, type Config, type FrozenConfig } from '../../src/config/schema';
import type { EnrichmentPlan } from '../../src/enrich/enricher';
import { createLogger } from '../../src/log';
import { startServer, type RunningServer } from '../../src/server/start';
import { makeTempDir } from './temp-dir';

export type DeepPartial<T> = T extends readonly (infer U)[] ? readonly U[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

export interface TestServer {
  url: string;
  server: RunningServer;
  config: FrozenConfig;
  /** Every line the server logged. */
  logs: string[];
  dbFile: string;
  dataDir: string;
  /** Stops the server (if running) and removes its data directory. */
  close(): Promise<void>;
  /** Stops and starts again on the same database and port. */
  restart(): Promise<void>;
}

export interface TestServerOptions {
  config?: DeepPartial<Config>;
  plan?: EnrichmentPlan;
  /** Reuse a database file (e.g. across a restart); defaults to a new temp dir. */
  dbFile?: string;
}

/** Config for tests: embedded defaults, port 0, a temp database, no outbound enrichment. */
export function testConfig(overrides: DeepPartial<Config>, dbFile: string): FrozenConfig {
  const base = configSchema.getDefault() as Config;
  const merged = merge(merge(base, { port: 0, database: dbFile, enrichment: { enabled: false } }), overrides);
  return configSchema.validateSync(merged, { strict: true }) as FrozenConfig;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const temp = makeTempDir();
  const dbFile = options.dbFile ?? path.join(temp.dir, 'svc.db');
  const logs: string[] = [];
  const logger = createLogger((line) => logs.push(line));
  let config = testConfig(options.config ?? {}, dbFile);
  let server = await startServer(config, { logger, plan: options.plan });
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
    async restart() {
      if (running) await server.close();
      // Let in-process HTTP clients notice that their pooled keep-alive sockets were closed.
      await new Promise((resolve) => setTimeout(resolve, 50));
      config = testConfig({ ...(options.config ?? {}), port: server.port }, dbFile);
      server = await startServer(config, { logger, plan: options.plan });
      running = true;
      handle.server = server;
      handle.config = config;
    },
  };
  return handle;
}

function merge<T>(base: T, override: unknown): T {
  if (!isObject(base) || !isObject(override)) return (override === undefined ? base : override) as T;
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) result[key] = merge(result[key], value);
  return result as T;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
