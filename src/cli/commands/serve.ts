import type { Command } from 'commander';
import type { FrozenConfig } from '../../config/schema';
import type { RunningIcecastListener } from '../../ingest/listener';
import { createLogger, type Logger } from '../../log';
import type { RunningServer } from '../../server/start';
import type { IcecastBannerFacts } from '../banner';
import type { CliContext, SetResult } from '../context';
import { DEFAULT_PORT, describeConfigSearch } from '../../config/defaults';

// The server stack (Koa, SQLite, ws) is required only when `svc serve` runs, so that the
// client commands start fast (see bench/cli-startup.bench.js).

interface ServeOptions {
  port?: string;
  host?: string;
  secret?: string;
  db?: string;
  config?: string;
  offline?: boolean;
  icecastPort?: string;
}

export function registerServe(program: Command, ctx: CliContext, setResult: SetResult): void {
  program
    .command('serve')
    .description('start the Track Metadata Web API server')
    .option('-p, --port <port>', `listen port (default ${DEFAULT_PORT}, env SVC_PORT)`)
    .option('--host <address>', 'listen address; 0.0.0.0 for LAN clients (default 127.0.0.1, env SVC_HOST)')
    .option('--secret <secret>', 'shared secret required by /v1/remoteinput (env SVC_SECRET)')
    .option('--db <file-or-url>', 'SQLite database file, :memory:, or a postgres:// URL shared by several instances (env SVC_DATABASE)')
    .option('--icecast-port <port>', 'also take DJ software streaming to it as to an Icecast server (8000 is what it expects); off by default')
    .option('--offline', 'no lookups in outside music services (a submitted coverurl is still fetched)')
    .option('-c, --config <file>', 'load this config file instead of searching for one')
    .addHelpText(
      'after',
      '\nExamples:\n  $ svc serve\n  $ svc serve --host 0.0.0.0 --port 9000 --secret "$(cat ~/.svc-secret)"\n  $ svc serve --db :memory: --offline',
    )
    .action((options: ServeOptions) => setResult(serve(options, ctx), { keepRunningWhenStdoutCloses: true }));
}

async function serve(options: ServeOptions, ctx: CliContext): Promise<number> {
  // require, not a top-level import: client commands never load Koa or SQLite.
  const { loadConfig } = require('../../config/load') as typeof import('../../config/load');
  const { isLoopbackHost, startServer } = require('../../server/start') as typeof import('../../server/start');
  const { config, filepath } = await loadConfig({
    configFile: options.config,
    flags: {
      port: options.port,
      host: options.host,
      secret: options.secret,
      'database.location': options.db,
      'enrichment.enabled': options.offline ? false : undefined,
      'icecastSource.port': options.icecastPort,
    },
  });
  const logger = createLogger();
  // Handlers first: a signal that arrives while starting must still close things cleanly.
  const interrupted = ctx.untilInterrupted();
  const stopSignal = new Promise<unknown>((resolve) => interrupted.addEventListener('abort', () => resolve(interrupted.reason), { once: true }));
  const server = await startServer(config, { logger });
  if (!isLoopbackHost(config.host) && config.secret === '') {
    logger.warn(`listening on ${config.host} without a secret: anyone who can reach this port can submit tracks (set --secret or SVC_SECRET)`);
  }
  const icecast = await startIcecastSource(config, server, logger).catch(async (error: unknown) => {
    await server.close();
    throw error;
  });
  const { bannerLines } = require('../banner') as typeof import('../banner');
  const banner = bannerLines({
    url: server.url,
    host: config.host,
    port: server.port,
    database: config.database.location,
    configFile: filepath,
    cwd: process.cwd(),
    configSearch: describeConfigSearch(process.cwd()),
    outputs: config.outputs.map((output) => ({ name: output.name, type: output.type })),
    icecast: icecast?.facts,
  });
  for (const line of banner) ctx.io.out(line);

  const signal = await stopSignal;
  logger.info(`${String(signal)} received: finishing in-flight submissions and closing`);
  // Sources first: the server's close then waits for the tracks they were submitting.
  await icecast?.listener.close();
  await server.close();
  return 0;
}

/** The Icecast source listener beside the server, when `icecastSource.port` is set (docs/dj-software.md). */
async function startIcecastSource(
  config: FrozenConfig,
  server: RunningServer,
  logger: Logger,
): Promise<{ listener: RunningIcecastListener; facts: IcecastBannerFacts } | null> {
  const { port, password } = config.icecastSource;
  if (port === undefined) return null;
  const { startIcecastListener } = require('../../ingest/listener') as typeof import('../../ingest/listener');
  const effectivePassword = password ?? config.secret;
  // Without a password any web page or LAN client could set the track through this port:
  // start-up stops and says what to set (docs/security.md "Icecast sources").
  const listener = await startIcecastListener({
    host: config.host,
    port,
    password: effectivePassword,
    submission: server.submission,
    logger,
    authentication: server.authentication,
  });
  const passwordSource: IcecastBannerFacts['password'] = password === undefined ? 'secret' : 'own';
  return { listener, facts: { url: listener.url, password: passwordSource } };
}
