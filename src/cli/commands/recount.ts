import type { CliContext } from '../context';
import { createClient, type ClientOptions } from '../client-options';
import { CliError, EXIT } from '../exit-codes';
import { isCalendarDate } from '../../reports/local-time';

// `svc report recount --from --to [--channel] [--apply]` (docs/play-log.md "Recounting"): asks
// POST /v1/reports/recount and prints before -> after per channel; nothing changes without --apply.

export interface RecountCliOptions extends ClientOptions {
  from?: string;
  to?: string;
  channel?: string;
  apply?: boolean;
}

interface ChannelLine {
  channel: string;
  plays: number;
  changed: number;
  atpBefore: number;
  atpAfter: number;
}

export async function runRecount(options: RecountCliOptions, ctx: CliContext): Promise<number> {
  for (const key of ['from', 'to'] as const) {
    const value = options[key];
    if (value === undefined || !isCalendarDate(value)) throw new CliError(`--${key}: expected a local date YYYY-MM-DD`, EXIT.USAGE);
  }
  const query = new URLSearchParams({ from: options.from ?? '', to: options.to ?? '' });
  if (options.channel !== undefined) query.set('channel', options.channel);
  if (options.apply === true) query.set('apply', '1');
  const client = await createClient(options);
  const answer = await client.postJsonOnce(`v1/reports/recount?${query.toString()}`, {});
  if (options.json === true) {
    ctx.io.out(answer.text.trim());
    return EXIT.OK;
  }
  const result = answer.json as { applied: boolean; channels: ChannelLine[] };
  ctx.io.out('channel\tplays\tchanged\tATP before -> after');
  for (const line of result.channels) ctx.io.out(`${line.channel}\t${line.plays}\t${line.changed}\t${line.atpBefore} -> ${line.atpAfter}`);
  const changed = result.channels.reduce((sum, line) => sum + line.changed, 0);
  ctx.io.err(result.applied ? `${changed} play(s) recounted and written` : `${changed} play(s) would change; nothing written (add --apply to write)`);
  return EXIT.OK;
}
