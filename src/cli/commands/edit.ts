import type { Command } from 'commander';
import { parseDbid } from '../../domain/history';
import { isPlainObject } from '../../domain/plain-object';
import { oneLine } from '../../domain/template';
import { addClientOptions, createClient, type ClientOptions } from '../client-options';
import type { CliContext, SetResult } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { jsonLine } from '../output';

// `svc edit DBID FIELD=VALUE...`: corrects a stored record through PATCH /v1/history/<dbid>
// (docs/cli.md "`svc edit`"), the way to fix what `svc report check` lists (docs/reports.md).

const EXAMPLES = `
Examples:
  $ svc report check soundexchange --from 2026-10-01 --to 2026-10-31
  dbid 4711: no ISRC and no album
  $ svc edit 4711 isrc=GBDUW0000053 album=Discovery
  dbid 4711: Daft Punk - One More Time (isrc, album)
  $ svc edit 5120 artist='Daft Punk' comment=
  dbid 5120: Daft Punk - Aerodynamic (artist; removed comment)
  $ svc edit 5200 writers='Thomas Bangalter' writers='Guy-Manuel de Homem-Christo'`;

/** Pure: `FIELD=VALUE` arguments as a PATCH body; `FIELD=` removes the field, a repeated field is a list. */
export function changesOf(args: readonly string[]): Record<string, string | string[] | null> {
  const body: Record<string, string | string[] | null> = {};
  for (const arg of args) {
    const at = arg.indexOf('=');
    const field = at < 0 ? '' : arg.slice(0, at).trim();
    if (field === '') throw new CliError(`expected FIELD=VALUE, got '${oneLine(arg)}'`, EXIT.USAGE);
    const value = arg.slice(at + 1);
    const before = body[field];
    if (value === '') body[field] = null;
    else if (before === undefined || before === null) body[field] = value;
    else body[field] = [...(Array.isArray(before) ? before : [before]), value];
  }
  return body;
}

export function registerEdit(program: Command, ctx: CliContext, setResult: SetResult): void {
  const command = program
    .command('edit')
    .argument('<dbid>', 'the record to correct (svc history --json and svc report check name it)')
    .argument('<changes...>', 'FIELD=VALUE to set a field, FIELD= to remove it; repeat a field for a list')
    .description("correct a stored record's fields (artist, title, album, label, isrc, writers, ...)");
  addClientOptions(command, 10, 'sent')
    .addHelpText('after', EXAMPLES)
    .action((dbid: string, changes: string[], options: ClientOptions) => setResult(runEdit(dbid, changes, options, ctx)));
}

async function runEdit(dbid: string, args: readonly string[], options: ClientOptions, ctx: CliContext): Promise<number> {
  if (parseDbid(dbid) === undefined) throw new CliError(`invalid dbid '${oneLine(dbid)}': expected a positive integer`, EXIT.USAGE);
  const changes = changesOf(args);
  const client = await createClient(options);
  const path = `v1/history/${dbid}`;
  const { json } = await client.patchJson(path, changes);
  const record = isPlainObject(json) && isPlainObject(json.record) ? json.record : undefined;
  if (!isPlainObject(json) || !record)
    throw new CliError(`unexpected answer from ${client.endpoint(path).href}: ${oneLine(JSON.stringify(json))}`, EXIT.SERVER_ERROR);
  for (const warning of Array.isArray(json.warnings) ? json.warnings : []) ctx.io.err(`warning: ${oneLine(String(warning))}`);
  if (options.json) {
    ctx.io.out(jsonLine(record));
    return EXIT.OK;
  }
  const names = [record.artist, record.title].filter((part) => typeof part === 'string').join(' - ');
  const set = Object.keys(changes).filter((field) => changes[field] !== null);
  const removed = Object.keys(changes).filter((field) => changes[field] === null);
  const what = [set.join(', '), removed.length > 0 ? `removed ${removed.join(', ')}` : ''].filter((part) => part !== '').join('; ');
  ctx.io.out(`dbid ${dbid}: ${oneLine(names)} (${what})`);
  return EXIT.OK;
}
