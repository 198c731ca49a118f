import type { Command } from 'commander';
import { ConfigError } from '../../errors';
import { createLogger } from '../../log';
import { versionText } from '../../version';
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
  const { startApp } = require('../../app/start-app') as typeof import('../../app/start-app');
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
  const { writesExposure } = require('../../config/exposure') as typeof import('../../config/exposure');
  const exposure = writesExposure(config);
  if (exposure.kind === 'refused') throw new ConfigError(`config error: ${exposure.message}`);
  const logger = createLogger();
  if (exposure.kind === 'open') {
    logger.warn(`${exposure.reasons.join('; ')} without a secret (openWrites: true): anyone who can reach this port can submit tracks`);
  }
  // Handlers first: a signal that arrives while starting must still close things cleanly.
  const interrupted = ctx.untilInterrupted();
  const stopSignal = new Promise<unknown>((resolve) => interrupted.addEventListener('abort', () => resolve(interrupted.reason), { once: true }));
  const app = await startApp(config, { logger });
  const icecast: IcecastBannerFacts | undefined = app.icecast
    ? { url: app.icecast.url, password: config.icecastSource.password === undefined ? 'secret' : 'own' }
    : undefined;
  const { bannerLines } = require('../banner') as typeof import('../banner');
  const banner = bannerLines({
    url: app.url,
    host: config.host,
    port: app.port,
    database: config.database.location,
    configFile: filepath,
    cwd: process.cwd(),
    configSearch: describeConfigSearch(process.cwd()),
    outputs: config.outputs.map((output) => ({ name: output.name, type: output.type })),
    icecast,
    version: { text: versionText(), schema: app.schema },
  });
  for (const line of banner) ctx.io.out(line);

  const signal = await stopSignal;
  logger.info(`${String(signal)} received: finishing in-flight submissions and closing`);
  await app.close();
  return 0;
}
