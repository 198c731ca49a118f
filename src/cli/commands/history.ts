import { CHANNEL_OPTION } from '../channel-option';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { addClientOptions, createClient, type ClientOptions } from '../client-options';
import type { SvcClient } from '../client';
import type { CliContext, SetResult } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { isPlainObject } from '../../domain/plain-object';
import { chooseTrackStyle, renderTrack } from '../output';
import { CSV_COLUMNS, csvRow, parseWhen, setlistLine, spansDays } from '../setlist';
import type { TrackObject } from '../../domain/template';
import { HISTORY_PAGE_LIMIT } from '../../domain/history';

// `svc history`: the setlist, oldest first, from GET /v1/history (which pages newest first).
// It walks the `next` links once keeping only the newest and the oldest page, then prints the
// oldest page and fetches the pages in between again, newest-first cursors in reverse: memory
// holds two pages and one link per page, whatever the range.

interface HistoryOptions extends ClientOptions {
  since?: string;
  until?: string;
  limit?: number;
  csv?: boolean;
  format?: string;
  channel?: string;
}

/** The server's largest page: fewest requests for a long setlist. */
const PAGE_SIZE = HISTORY_PAGE_LIMIT.max;

const EXAMPLES = `
Examples:
  $ svc history --since 2h
  20:02  Massive Attack - Teardrop
  20:07  Daft Punk - One More Time
  $ svc history --since 2026-11-22T20:00 --until 2026-11-22T22:00 --csv > setlist.csv
  $ svc history --limit 10 --json | jq -r .title
  $ svc history --since 1d --format '{artist} - {title} ({album})'

WHEN is an ISO 8601 date-time (local time unless it names an offset) or a span back from now:
90m, 2h, 1d, 1w. --since is inclusive, --until exclusive; --limit keeps the newest N tracks.
Text lines are HH:MM in local time (TZ), YYYY-MM-DD HH:MM when the setlist spans days; --csv is RFC 4180 with a header row
(${CSV_COLUMNS.join(',')}); --json is one /v1/history entry per line.`;

export function registerHistory(program: Command, ctx: CliContext, setResult: SetResult): void {
  const command = program.command('history').description('print the setlist: the tracks played, oldest first');
  addClientOptions(command, 10)
    .option('--since <when>', 'only tracks received at or after WHEN (ISO date-time or 90m, 2h, 1d)')
    .option('--until <when>', 'only tracks received before WHEN')
    .addOption(new Option('--limit <n>', 'at most the newest N tracks of the range').argParser(parseLimit))
    .addOption(new Option('--csv', 'print CSV (RFC 4180) with a header row').conflicts(['json', 'format']))
    .addOption(new Option('--format <template>', 'print each track with a template such as "{artist} - {title}"').conflicts('json'))
    .option(CHANNEL_OPTION, "only that channel's plays (docs/channels.md); --limit counts them")
    .addHelpText('after', EXAMPLES)
    .action((options: HistoryOptions) => setResult(runHistory(options, ctx)));
}

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(limit) || limit < 1) throw new InvalidArgumentError('expected a positive integer.');
  return limit;
}

async function runHistory(options: HistoryOptions, ctx: CliContext): Promise<number> {
  const now = new Date();
  const query = new URLSearchParams({ limit: String(Math.min(options.limit ?? PAGE_SIZE, PAGE_SIZE)) });
  for (const key of ['since', 'until'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    const at = parseWhen(value, now);
    if (at === undefined)
      throw new CliError(`--${key}: expected an ISO date-time (2026-11-22T20:00) or a span such as 90m, 2h, 1d; got ${JSON.stringify(value)}`, EXIT.USAGE);
    query.set(key, at);
  }
  const client = await createClient(options);
  const range: Range = {};
  const channel = options.channel;
  const keep = channel === undefined ? () => true : (track: TrackObject) => track.channel === channel;
  const pages = pagesOldestFirst(client, `v1/history?${query.toString()}`, options.limit, range, keep);
  // The first page comes after the walk through every link: a server that cannot be reached or
  // refuses fails before anything (not even the CSV header) reaches stdout.
  const first = await pages.next();
  const write = writerFor(options, ctx, spansDays(range.oldest, range.newest));
  if (!first.done) for (const track of first.value) write(track);
  for await (const page of pages) {
    for (const track of page) write(track);
  }
  return EXIT.OK;
}

function writerFor(options: HistoryOptions, ctx: CliContext, withDate: boolean): (track: TrackObject) => void {
  // RFC 4180 section 2: records end in CRLF (io.out adds the LF).
  if (options.csv) {
    ctx.io.out(`${CSV_COLUMNS.join(',')}\r`);
    return (track) => ctx.io.out(`${csvRow(track)}\r`);
  }
  if (options.json || options.format !== undefined) {
    const style = chooseTrackStyle(options, ctx.io);
    return (track) => ctx.io.out(renderTrack(track, style));
  }
  return (track) => ctx.io.out(setlistLine(track, withDate));
}

/** The received times of the oldest and the newest track of the setlist. */
interface Range {
  oldest?: unknown;
  newest?: unknown;
}

/**
 * Each page oldest track first, the oldest page first; `limit` keeps the newest N overall.
 * `range` is filled in before the first page comes out.
 */
async function* pagesOldestFirst(
  client: SvcClient,
  first: string,
  limit: number | undefined,
  range: Range,
  keep: (track: TrackObject) => boolean,
): AsyncGenerator<TrackObject[]> {
  const links: string[] = [];
  let newest: TrackObject[] = [];
  let oldest: TrackObject[] = [];
  let count = 0;
  let link: string | undefined = first;
  while (link !== undefined) {
    const page = await fetchPage(client, link, keep);
    const room = limit === undefined ? page.tracks.length : limit - count;
    const tracks = page.tracks.slice(0, room);
    count += tracks.length;
    links.push(link);
    if (links.length === 1) newest = tracks;
    oldest = tracks;
    link = limit !== undefined && count >= limit ? undefined : page.next;
  }
  range.newest = newest[0]?.received_at;
  range.oldest = oldest[oldest.length - 1]?.received_at;
  yield [...oldest].reverse();
  for (let i = links.length - 2; i >= 1; i--) {
    yield (await fetchPage(client, links[i], keep)).tracks.reverse();
  }
  if (links.length > 1) yield [...newest].reverse();
}

interface Page {
  tracks: TrackObject[];
  next?: string;
}

/** One page of the setlist, only the tracks `keep` keeps (a channel's). */
async function fetchPage(client: SvcClient, link: string, keep: (track: TrackObject) => boolean): Promise<Page> {
  const answer = await client.getJson(link);
  const body = answer.json;
  if (!isPlainObject(body) || !Array.isArray(body.tracks) || !body.tracks.every(isPlainObject)) {
    throw new CliError(`unexpected answer from ${client.endpoint(link).href}: no tracks list (is this an svc server?)`, EXIT.SERVER_ERROR);
  }
  if (body.next !== undefined && typeof body.next !== 'string') {
    throw new CliError(`unexpected answer from ${client.endpoint(link).href}: next is not a link`, EXIT.SERVER_ERROR);
  }
  return { tracks: body.tracks.filter(keep), next: body.next };
}
