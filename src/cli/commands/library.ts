import path from 'node:path';
import type { Command } from 'commander';
import { isPlainObject } from '../../domain/plain-object';
import { oneLine } from '../../domain/template';
import { addClientOptions, createClient, type ClientOptions } from '../client-options';
import type { CliContext, SetResult } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { jsonLine } from '../output';

// `svc library add PATH...`, `svc library [list]`, `svc library remove ID|PATH`: the recognition
// library through /v1/library (docs/recognition.md "The library"). The paths are read by the
// server; relative ones are made absolute against this command's folder first.

const EXAMPLES = `
Examples:
  $ svc library add ~/music/crates /srv/playlists/friday.m3u
  added 48, unchanged 0, skipped 1; 48 tracks in the library
  svc: skipped /home/dj/music/crates/broken.mp3: cannot decode: Invalid data found when processing input
  $ svc library
  ID  ARTIST     TITLE        SECONDS  PATH
  1   Nightmares  Caves        182     /home/dj/music/crates/caves.ogg
  $ svc library remove 1
  $ svc library remove ~/music/crates`;

const COLUMNS = ['ID', 'ARTIST', 'TITLE', 'SECONDS', 'PATH'] as const;

export function registerLibrary(program: Command, ctx: CliContext, setResult: SetResult): void {
  const command = program.command('library').description('the audio files svc recognises: add, list and remove them');
  addClientOptions(command, 10, 'sent')
    .addHelpText('after', EXAMPLES)
    .action((options: ClientOptions) => setResult(runList(options, ctx)));
  addClientOptions(command.command('list').description('list the library, by id'), 10, 'sent').action((options: ClientOptions) =>
    setResult(runList({ ...command.opts<ClientOptions>(), ...definedOnly(options) }, ctx)),
  );
  const add = command
    .command('add')
    .argument('<paths...>', 'audio files, folders (read recursively) and .m3u playlists, as the server sees them')
    .description('fingerprint files into the library; unchanged files are not read again');
  addClientOptions(add, 10, 'sent').action((paths: string[], options: ClientOptions) =>
    setResult(runAdd(paths, { ...command.opts<ClientOptions>(), ...definedOnly(options) }, ctx)),
  );
  const remove = command
    .command('remove')
    .argument('<id-or-path>', 'a library id (svc library lists them), or a file or folder path')
    .description('remove tracks');
  addClientOptions(remove, 10, 'sent').action((target: string, options: ClientOptions) =>
    setResult(runRemove(target, { ...command.opts<ClientOptions>(), ...definedOnly(options) }, ctx)),
  );
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}

const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? oneLine(String(value)) : '-');

async function runList(options: ClientOptions, ctx: CliContext): Promise<number> {
  const client = await createClient(options);
  const { json } = await client.getJson('v1/library', true);
  const tracks = isPlainObject(json) && Array.isArray(json.tracks) ? json.tracks.filter(isPlainObject) : undefined;
  if (!tracks) throw new CliError(`unexpected answer from ${client.endpoint('v1/library').href}: no tracks list (is this an svc server?)`, EXIT.SERVER_ERROR);
  if (options.json) {
    ctx.io.out(jsonLine(json));
    return EXIT.OK;
  }
  if (tracks.length === 0) {
    ctx.io.out('the library is empty (svc library add PATH)');
    return EXIT.OK;
  }
  const rows = tracks.map((track) => {
    const tags = isPlainObject(track.tags) ? track.tags : {};
    const seconds = typeof track.durationSeconds === 'number' ? Math.round(track.durationSeconds) : undefined;
    return [track.id, tags.artist, tags.title, seconds, track.path].map(text);
  });
  const widths = COLUMNS.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)));
  const format = (cells: readonly string[]) => cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  ');
  ctx.io.out(format(COLUMNS));
  for (const row of rows) ctx.io.out(format(row));
  return EXIT.OK;
}

async function runAdd(paths: string[], options: ClientOptions, ctx: CliContext): Promise<number> {
  const client = await createClient(options);
  const response = await client.postStream('v1/library', { paths: paths.map((given) => path.resolve(given)) });
  let summary: Record<string, unknown> | undefined;
  for await (const line of ndjsonLines(response)) {
    if (line.type === 'progress') ctx.io.status(`[${text(line.done)}/${text(line.total)}] ${text(line.outcome)} ${text(line.path)}`);
    else if (line.type === 'problem' && isPlainObject(line.problem)) ctx.io.err(`svc: skipped ${text(line.problem.path)}: ${text(line.problem.error)}`);
    else if (line.type === 'summary') summary = line;
    else if (line.type === 'error') throw new CliError(`svc library add failed on the server: ${text(line.error)}`, EXIT.SERVER_ERROR);
  }
  ctx.io.status('');
  if (!summary) throw new CliError('the server ended the answer before its summary (was it stopped?)', EXIT.SERVER_ERROR);
  const failed = Array.isArray(summary.failed) ? summary.failed.length : 0;
  if (options.json) ctx.io.out(jsonLine(summary));
  else ctx.io.out(`added ${text(summary.added)}, unchanged ${text(summary.unchanged)}, skipped ${failed}; ${text(summary.tracks)} tracks in the library`);
  // Skipped files are problems found: the rest was added (docs/recognition.md "The library").
  return failed > 0 ? EXIT.SERVER_ERROR : EXIT.OK;
}

async function* ndjsonLines(response: Response): AsyncGenerator<Record<string, unknown>> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let partial = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    partial += decoder.decode(chunk, { stream: true });
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      const parsed: unknown = JSON.parse(line);
      if (isPlainObject(parsed)) yield parsed;
    }
  }
}

async function runRemove(target: string, options: ClientOptions, ctx: CliContext): Promise<number> {
  const client = await createClient(options);
  const byId = /^\d+$/.test(target);
  const { json } = await client.deleteJson(byId ? `v1/library/${target}` : `v1/library?path=${encodeURIComponent(path.resolve(target))}`);
  const removed = isPlainObject(json) && Array.isArray(json.removed) ? json.removed.length : 0;
  if (options.json) ctx.io.out(jsonLine(json));
  else ctx.io.out(`removed ${removed} track(s)`);
  return EXIT.OK;
}
