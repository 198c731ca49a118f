import type { Command } from 'commander';
import { addClientOptions, createClient, type ClientOptions } from '../client-options';
import type { CliContext, SetResult } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { isPlainObject } from '../../domain/plain-object';
import { colorEnabled } from '../io';
import { createPainter, jsonLine } from '../output';
import { oneLine } from '../../domain/template';

// `svc status`: GET /v1/status; exit 0 when the server answers {"status": "ok"}.

const EXAMPLES = `
Examples:
  $ svc status
  ok  svc 0.1.0 at http://127.0.0.1:8899/
      config /home/you/radio/.svcrc
  $ svc status --json
  {"status":"ok","version":"0.1.0","database":"ok"}
  $ until svc status >/dev/null 2>&1; do sleep 1; done   # wait for the server`;

export function registerStatus(program: Command, ctx: CliContext, setResult: SetResult): void {
  const command = program.command('status').description('print the server status and version (exit 0 when healthy, 1 when the server or its database is not)');
  addClientOptions(command, 10)
    .addHelpText('after', EXAMPLES)
    .action((options: ClientOptions) => setResult(runStatus(options, ctx)));
}

async function runStatus(options: ClientOptions, ctx: CliContext): Promise<number> {
  const client = await createClient(options);
  const { json } = await client.getJson('v1/status');
  // Shown on a terminal: no control characters from the server.
  const status = isPlainObject(json) && typeof json.status === 'string' ? oneLine(json.status) : undefined;
  const version = isPlainObject(json) && typeof json.version === 'string' ? oneLine(json.version) : 'unknown';
  if (status === undefined) {
    throw new CliError(`unexpected answer from ${client.endpoint('v1/status').href}: no status field (is this an svc server?)`, EXIT.SERVER_ERROR);
  }
  // The process answers "ok" while its database is gone (docs/first-hour.md "`svc status`"):
  // submissions fail then, so a script checking health must hear about it.
  const database = isPlainObject(json) && typeof json.database === 'string' ? oneLine(json.database) : undefined;
  const databaseDown = database !== undefined && database !== 'ok';
  const healthy = status === 'ok' && !databaseDown;
  if (options.json) {
    ctx.io.out(jsonLine(json));
  } else {
    const paint = createPainter(colorEnabled(ctx.io.env, ctx.io.stdoutIsTTY, false));
    const word = healthy ? paint.good(status) : paint.bad(databaseDown ? `database ${database}` : status);
    ctx.io.out(`${word}  svc ${version} at ${client.settings.baseUrl.href}`);
    // Which config this client used: the answer to "why does it talk to that server?".
    if (client.settings.configSource) ctx.io.out(`    ${client.settings.configSource}`);
    // docs/channels.md "No silent zeros": a channel on air whose listeners nobody counts.
    for (const unheard of unheardChannels(json)) ctx.io.out(`    ${paint.bad('unheard')} channel ${unheard}`);
  }
  if (status !== 'ok') ctx.io.err(`svc: the server reports status "${status}"`);
  else if (databaseDown) ctx.io.err(`svc: the server is up but its database is ${database}: submissions fail until it is back`);
  return healthy ? EXIT.OK : EXIT.SERVER_ERROR;
}

/** `unheard_channels` of a /v1/status answer, each as `"NAME": problem`, made one line. */
function unheardChannels(json: unknown): string[] {
  const list = isPlainObject(json) && Array.isArray(json.unheard_channels) ? json.unheard_channels : [];
  return list.filter(isPlainObject).map((entry) => oneLine(`${JSON.stringify(String(entry.channel))}: ${String(entry.problem)}`));
}
