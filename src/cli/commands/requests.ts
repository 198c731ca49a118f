import type { Command } from 'commander';
import { isPlainObject } from '../../domain/plain-object';
import { oneLine } from '../../domain/template';
import { addClientOptions, createClient, type ClientOptions } from '../client-options';
import type { CliContext, SetResult } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { jsonLine } from '../output';

// `svc requests [list]`, `svc requests add`, `svc requests remove ID`, `svc requests clear`: the
// song-request queue through GET/POST/DELETE /v1/requests (docs/song-requests.md). Each sends the
// secret: the queue API takes it on reads too.

const EXAMPLES = `
Examples:
  $ svc requests add --requester viewer1 --artist Radiohead --title Creep
  queued #1: Radiohead - Creep (for viewer1)
  $ svc requests add --requester viewer2 'Nirvana - Breed'
  $ svc requests
  ID  REQUESTER  ARTIST     TITLE  PLATFORM  SINCE
  1   viewer1    Radiohead  Creep  -         2026-11-27T01:02:03.000Z
  2   viewer2    Nirvana    Breed  -         2026-11-27T01:02:09.000Z
  $ svc requests remove 1
  $ svc requests clear`;

const COLUMNS = ['ID', 'REQUESTER', 'ARTIST', 'TITLE', 'PLATFORM', 'SINCE'] as const;

interface AddOptions extends ClientOptions {
  requester: string;
  artist?: string;
  title?: string;
  platform?: string;
}

export function registerRequests(program: Command, ctx: CliContext, setResult: SetResult): void {
  const command = program.command('requests').description('list the song-request queue; add, remove and clear requests');
  addClientOptions(command, 10, 'sent')
    .addHelpText('after', EXAMPLES)
    .action((options: ClientOptions) => setResult(runList(options, ctx)));
  addClientOptions(command.command('list').description('list the queue, oldest first'), 10, 'sent').action((options: ClientOptions) =>
    setResult(runList({ ...command.opts<ClientOptions>(), ...definedOnly(options) }, ctx)),
  );
  const add = command
    .command('add')
    .argument('[query...]', "what was asked for as a chat line ('Artist - Title', '\"Title\" by Artist'), instead of --artist and --title")
    .requiredOption('--requester <name>', 'who asked')
    .option('--artist <artist>', 'the artist asked for')
    .option('--title <title>', 'the title asked for')
    .option('--platform <name>', 'where the request came from (twitch, kick, ...)')
    .description('queue a request');
  addClientOptions(add, 10, 'sent').action((query: string[], options: AddOptions) =>
    setResult(runAdd(query.join(' '), { ...command.opts<ClientOptions>(), ...definedOnly(options) } as AddOptions, ctx)),
  );
  const remove = command.command('remove').argument('<id>', 'the request id (svc requests lists them)').description('remove one request');
  addClientOptions(remove, 10, 'sent').action((id: string, options: ClientOptions) =>
    setResult(runDelete(`v1/requests/${encodeURIComponent(id)}`, { ...command.opts<ClientOptions>(), ...definedOnly(options) }, ctx)),
  );
  addClientOptions(command.command('clear').description('remove every request'), 10, 'sent').action((options: ClientOptions) =>
    setResult(runDelete('v1/requests', { ...command.opts<ClientOptions>(), ...definedOnly(options) }, ctx)),
  );
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}

const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? oneLine(String(value)) : '-');

async function runList(options: ClientOptions, ctx: CliContext): Promise<number> {
  const client = await createClient(options);
  const { json } = await client.getJson('v1/requests', true);
  const requests = isPlainObject(json) && Array.isArray(json.requests) ? json.requests.filter(isPlainObject) : undefined;
  if (!requests)
    throw new CliError(`unexpected answer from ${client.endpoint('v1/requests').href}: no requests list (is this an svc server?)`, EXIT.SERVER_ERROR);
  if (options.json) {
    ctx.io.out(jsonLine(json));
    return EXIT.OK;
  }
  if (requests.length === 0) {
    ctx.io.out('no requests queued');
    return EXIT.OK;
  }
  const rows = requests.map((request) =>
    [request.request_id, request.requester, request.artist, request.title, request.user_platform, request.timestamp].map(text),
  );
  const widths = COLUMNS.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)));
  const format = (cells: readonly string[]) => cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  ');
  ctx.io.out(format(COLUMNS));
  for (const row of rows) ctx.io.out(format(row));
  return EXIT.OK;
}

async function runAdd(query: string, options: AddOptions, ctx: CliContext): Promise<number> {
  if (query.trim() === '' && options.artist === undefined && options.title === undefined) {
    throw new CliError('nothing to request: give --artist and --title, or the request as text', EXIT.USAGE);
  }
  const client = await createClient(options);
  const body = {
    requester: options.requester,
    ...(options.artist === undefined ? {} : { artist: options.artist }),
    ...(options.title === undefined ? {} : { title: options.title }),
    ...(query.trim() === '' ? {} : { query }),
    ...(options.platform === undefined ? {} : { user_platform: options.platform }),
  };
  const { json } = await client.postJson('v1/requests', body);
  if (!isPlainObject(json) || json.accepted !== true)
    throw new CliError(`unexpected answer from ${client.endpoint('v1/requests').href}: ${oneLine(JSON.stringify(json))}`, EXIT.SERVER_ERROR);
  if (options.json) {
    ctx.io.out(jsonLine(json));
    return EXIT.OK;
  }
  const what = [json.requestartist ?? options.artist, json.requesttitle ?? options.title].filter((part) => typeof part === 'string').join(' - ');
  ctx.io.out(
    json.deduped === true
      ? `already queued #${text(json.request_id)} (asked again within 30 s)`
      : `queued #${text(json.request_id)}: ${oneLine(what)} (for ${oneLine(options.requester)})`,
  );
  return EXIT.OK;
}

async function runDelete(path: string, options: ClientOptions, ctx: CliContext): Promise<number> {
  const client = await createClient(options);
  const { json } = await client.deleteJson(path);
  if (options.json) ctx.io.out(jsonLine(json));
  else if (isPlainObject(json) && json.cleared === true) ctx.io.out('queue cleared');
  else ctx.io.out(`removed ${text(isPlainObject(json) ? json.deleted : undefined)} request(s)`);
  return EXIT.OK;
}
