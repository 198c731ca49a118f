import { InvalidArgumentError, Option, type Command } from 'commander';
import { SvcClient } from './client';
import { CliError, EXIT } from './exit-codes';
import { DEFAULT_PORT, describeConfigSearch } from '../config/defaults';
import { hasHttpScheme } from '../domain/http-url';

// The options every client command shares, and how they become a client:
// flag > environment (SVC_URL, SVC_SECRET) > config file (client.url, client.secret) > the
// server the config file describes (port, host, secret) > default.

export interface ClientOptions {
  url?: string;
  secret?: string;
  config?: string;
  json?: boolean;
  timeout?: number;
}

/** How a command uses --secret: only submissions send it; reads need none (docs/http-api.md). */
export type SecretUse = 'sent' | 'unused';

const SECRET_HELP: Readonly<Record<SecretUse, string>> = {
  sent: "shared secret, sent in the X-SVC-Client-Auth request header, never in the URL (env SVC_SECRET, config client.secret, else the config's secret)",
  unused: 'accepted so one set of flags fits every command, but never sent: reading needs no secret (env SVC_SECRET, config client.secret)',
};

export function addClientOptions(command: Command, defaultTimeoutSeconds: number, secretUse: SecretUse = 'unused'): Command {
  return command
    .option('--url <url>', `server to talk to (env SVC_URL, config client.url, else the config's port and host; default http://127.0.0.1:${DEFAULT_PORT})`)
    .option('--secret <secret>', SECRET_HELP[secretUse])
    .option('-c, --config <file>', 'load this config file instead of searching for one')
    .option('--json', 'print JSON (one object per line) instead of text')
    .addOption(
      new Option('--timeout <seconds>', 'give up on a request after this many seconds (counts as unreachable, exit 4)')
        .argParser(parseSeconds)
        .default(defaultTimeoutSeconds),
    );
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds <= 0) {
    throw new InvalidArgumentError('expected a positive number of seconds.');
  }
  return seconds;
}

/** Loads the config (lazily: yup and cosmiconfig are only needed here) and builds the client. */
export async function createClient(options: ClientOptions): Promise<SvcClient> {
  const { loadConfig } = require('../config/load') as typeof import('../config/load');
  const { config, filepath } = await loadConfig({
    configFile: options.config,
    flags: { 'client.url': options.url, 'client.secret': options.secret },
  });
  const { clientTarget } = require('../config/client-target') as typeof import('../config/client-target');
  const target = clientTarget(config);
  return new SvcClient({
    baseUrl: parseBaseUrl(target.url),
    secret: target.secret,
    timeoutMs: Math.round((options.timeout ?? 10) * 1000),
    configSource: filepath ? `config ${filepath}` : `no config file found (${describeConfigSearch(process.cwd())})`,
  });
}

/** The server's base URL, ending in "/" so that relative paths keep a path prefix. */
function parseBaseUrl(raw: string): URL {
  const invalid = (why: string, shown: string) => new CliError(`invalid server URL ${shown}: ${why} (set it with --url, SVC_URL or client.url)`, EXIT.USAGE);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('not a URL', JSON.stringify(raw));
  }
  // Never echo credentials or a query string: either may hold a secret.
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  if (!hasHttpScheme(url)) throw invalid('expected http:// or https://', shown);
  if (url.username || url.password) throw invalid('no user or password in the URL; use --secret', shown);
  if (url.search || url.hash) throw invalid('no query string or fragment', shown);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}
