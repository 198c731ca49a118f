import type { Command } from 'commander';
import { isPlainObject } from '../../domain/plain-object';
import { oneLine } from '../../domain/template';
import { addClientOptions, createClient, type ClientOptions } from '../client-options';
import type { CliContext, SetResult } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { colorEnabled } from '../io';
import { createPainter, jsonLine, type Painter } from '../output';
import { OUTPUT_TYPES } from '../../config/output-types';
import { outputBlock } from './output-blocks';

// `svc outputs [--json]`: GET /v1/outputs as a table; `svc outputs test NAME`: POST
// /v1/outputs/NAME/test, which sends the current track to that output now; `svc outputs add
// TYPE`: a commented config block for that type, no server needed (docs/outputs.md).

const EXAMPLES = `
Examples:
  $ svc outputs
  NAME     TYPE     STATE     PENDING  SUPERSEDED  LAST SUCCESS                    LAST ERROR
  discord  discord  ok        0        3           2026-11-23T21:04:11Z (dbid 41)  -
  stream   icecast  retrying  1        0           2026-11-23T21:00:02Z (dbid 40)  2026-11-23T21:05:09Z connection refused
  $ svc outputs --json
  $ svc outputs test discord
  discord: delivered (HTTP 200, receipt 1176350000000000000) in 412 ms
  $ svc outputs add url >> .svcrc.yaml`;

const COLUMNS = ['NAME', 'TYPE', 'STATE', 'PENDING', 'SUPERSEDED', 'LAST SUCCESS', 'LAST ERROR'] as const;

export function registerOutputs(program: Command, ctx: CliContext, setResult: SetResult): void {
  const command = program.command('outputs').description(`show each output (${OUTPUT_TYPES.join(', ')}): state, pending, superseded, last success and error`);
  addClientOptions(command, 10, 'sent')
    .addHelpText('after', EXAMPLES)
    .action((options: ClientOptions) => setResult(runOutputs(options, ctx)));
  const test = command.command('test').argument('<name>', 'the output to send to').description('send the current track to one output now and print the result');
  // The parent takes the same options: flags written after `test NAME` may land on either.
  addClientOptions(test, 30, 'sent').action((name: string, options: ClientOptions) =>
    setResult(runTest(name, { ...definedOnly(command.opts<ClientOptions>()), ...definedOnly(options), timeout: options.timeout }, ctx)),
  );
  command
    .command('add')
    .argument('<type>', `the output type: ${OUTPUT_TYPES.join(', ')}`)
    .description('print a commented config block for one output type, to paste into .svcrc.yaml')
    .action((type: string) => setResult(Promise.resolve(runAdd(type, ctx))));
}

function runAdd(type: string, ctx: CliContext): number {
  const block = outputBlock(type);
  if (block === undefined) throw new CliError(`unknown output type "${oneLine(type)}": one of ${OUTPUT_TYPES.join(', ')}`, EXIT.USAGE);
  ctx.io.out(block.trimEnd());
  return EXIT.OK;
}

function definedOnly(options: ClientOptions): ClientOptions {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

async function runOutputs(options: ClientOptions, ctx: CliContext): Promise<number> {
  const client = await createClient(options);
  const { json } = await client.getJson('v1/outputs', true);
  const outputs = isPlainObject(json) && Array.isArray(json.outputs) ? json.outputs.filter(isPlainObject) : undefined;
  if (!outputs) throw new CliError(`unexpected answer from ${client.endpoint('v1/outputs').href}: no outputs list (is this an svc server?)`, EXIT.SERVER_ERROR);
  if (options.json) {
    ctx.io.out(jsonLine(json));
    return EXIT.OK;
  }
  if (outputs.length === 0) {
    ctx.io.out('no outputs configured (see docs/outputs.md)');
    return EXIT.OK;
  }
  const paint = createPainter(colorEnabled(ctx.io.env, ctx.io.stdoutIsTTY, false));
  const rows = outputs.map((output) => outputRow(output));
  const widths = COLUMNS.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)));
  const format = (cells: readonly string[], painted?: Painter) =>
    cells
      .map((cell, column) => {
        const padded = column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0);
        return painted && column === 2 ? (cell === 'ok' ? painted.good(padded) : painted.bad(padded)) : padded;
      })
      .join('  ');
  ctx.io.out(format(COLUMNS));
  for (const row of rows) ctx.io.out(format(row, paint));
  return EXIT.OK;
}

function outputRow(output: Record<string, unknown>): string[] {
  const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? oneLine(String(value)) : '-');
  const receipt =
    isPlainObject(output.lastSuccess) && typeof output.lastSuccess.receipt === 'string' ? ` ${shortened(oneLine(output.lastSuccess.receipt))}` : '';
  const success = isPlainObject(output.lastSuccess) ? `${text(output.lastSuccess.at)} (dbid ${text(output.lastSuccess.dbid)})${receipt}` : '-';
  // Its time tells an error that ended before the last success from one still going on.
  const error = isPlainObject(output.lastError) ? `${text(output.lastError.at)} ${text(output.lastError.message)}` : '-';
  // Superseded: messages a current-state target skipped for a newer record (never sent).
  return [text(output.name), text(output.type), text(output.state), text(output.pending), text(output.superseded), success, error];
}

/** A receipt in the table: its start, so that the row stays readable. */
function shortened(receipt: string, length = 48): string {
  const chars = [...receipt];
  return chars.length > length ? `${chars.slice(0, length - 1).join('')}…` : receipt;
}

async function runTest(name: string, options: ClientOptions, ctx: CliContext): Promise<number> {
  const client = await createClient(options);
  const { json } = await client.postJson(`v1/outputs/${encodeURIComponent(name)}/test`, {});
  if (!isPlainObject(json) || typeof json.outcome !== 'string') {
    throw new CliError(`unexpected answer from ${client.endpoint('v1/outputs').href}: no outcome (is this an svc server?)`, EXIT.SERVER_ERROR);
  }
  const delivered = json.outcome === 'delivered';
  if (options.json) {
    ctx.io.out(jsonLine(json));
  } else {
    const details = [typeof json.status === 'number' ? `HTTP ${json.status}` : '', typeof json.receipt === 'string' ? `receipt ${oneLine(json.receipt)}` : '']
      .filter((part) => part !== '')
      .join(', ');
    const why = typeof json.error === 'string' ? `: ${oneLine(json.error)}` : '';
    const duration = typeof json.durationMs === 'number' ? ` in ${json.durationMs} ms` : '';
    ctx.io.out(`${oneLine(name)}: ${json.outcome}${details ? ` (${details})` : ''}${why}${duration}`);
  }
  return delivered ? EXIT.OK : EXIT.SERVER_ERROR;
}
