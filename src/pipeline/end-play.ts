import { DEFAULT_CHANNEL } from '../domain/play';
import { AppError } from '../errors';
import { authenticate } from './authenticate';
import { parseSubmission, type ParseOptions, type RawRequest } from './parse';
import type { PlayLogPort } from '../playlog/port';
import type { ChannelRules } from '../domain/channels';

// POST /v1/remoteinput/end (docs/play-log.md "Air times"): the DJ software says the play on a
// channel has ended. Same carriers and 403s as /v1/remoteinput.

export interface EndPlayDeps extends ParseOptions {
  secret: string;
  playLog: Pick<PlayLogPort, 'end'>;
  /** Declared channels (docs/channels.md): an alias or a mount names its channel; nothing names the first. */
  channels?: ChannelRules;
}

export interface EndPlayResult {
  channel: string;
  /** The play that ended. */
  dbid: number;
}

export async function endPlay(request: RawRequest, deps: EndPlayDeps): Promise<EndPlayResult> {
  const { fields, credential } = parseSubmission(request, deps);
  authenticate(credential, deps.secret);
  const given = fields.channel;
  if (given !== undefined && (typeof given !== 'string' || given.trim() === '')) {
    throw new AppError('INVALID_PARAMETERS', "Invalid 'channel': expected a channel name");
  }
  const named = typeof given === 'string' ? given.trim() : undefined;
  const channel = deps.channels ? deps.channels.resolve(named).channel : (named ?? DEFAULT_CHANNEL);
  const dbid = await deps.playLog.end(channel, 'explicit');
  if (dbid === null) throw new AppError('NOT_FOUND', `No play on air on channel ${JSON.stringify(channel.slice(0, 64))}`);
  return { channel, dbid };
}
