import type { Command } from 'commander';
import { loadConfig } from '../../config/load';
import { createLogger } from '../../log';
import { isLoopbackHost, startServer } from '../../server/start';

interface ServeOptions {
  port?: string;
  host?: string;
  secret?: string;
  db?: string;
  config?: string;
  offline?: boolean;
}

export function registerServe(program: Command, setResult: (done: Promise<number>) => void): void {
  program
    .command('serve')
    .description('start the Track Metadata Web API server')
    .option('-p, --port <port>', 'listen port (default 8899, env SVC_PORT)')
    .option('--host <address>', 'listen address; 0.0.0.0 for LAN clients (default 127.0.0.1, env SVC_HOST)')
    .option('--secret <secret>', 'shared secret required by /v1/remoteinput (env SVC_SECRET)')
    .option('--db <file>', 'SQLite database file, or :memory: (env SVC_DATABASE)')
    .option('--offline', 'no lookups in outside music services (a submitted coverurl is still fetched)')
    .option('-c, --config <file>', 'load this config file instead of searching for one')
    .addHelpText('after', '\nExamples:\n  $ svc serve\n  $ svc serve --host 0.0.0.0 --port 9000 --secret "$(cat ~/.svc-secret)"\n  $ svc serve --db :memory: --offline')
    .action((options: ServeOptions) => setResult(serve(options)));
}

async function serve(options: ServeOptions): Promise<number> {
  const { config } = await loadConfig({
    configFile: options.config,
    flags: {
      port: options.port,
      host: options.host,
      secret: options.secret,
      database: options.db,
      'enrichment.enabled': options.offline ? false : undefined,
    },
  });
  const logger = createLogger();
  // Handlers first: a signal that arrives while starting must still close things cleanly.
  const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  const server = await startServer(config, { logger });
  if (!isLoopbackHost(config.host) && config.secret === '') {
    logger.warn(`listening on ${config.host} without a secret: anyone who can reach this port can submit tracks (set --secret or SVC_SECRET)`);
  }
  process.stdout.write(`svc listening on ${server.url}\n`);

  const signal = await stopSignal;
  logger.info(`${signal} received: finishing in-flight submissions and closing`);
  await server.close();
  return 0;
}
