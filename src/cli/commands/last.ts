import { Option, type Command } from 'commander';
import { addClientOptions, createClient, type ClientOptions } from '../client-options';
import type { SvcClient } from '../client';
import type { CliContext, SetResult } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { isPlainObject } from '../../domain/plain-object';
import { isTrackFrame, trackIdentity } from '../frames';
import { catchUpAfter } from '../catch-up';
import { followImageStream } from '../image-stream';
import { chooseTrackStyle, renderTrack, type TrackStyle } from '../output';
import { CHANNEL_OPTION, withChannel } from '../channel-option';

// `svc last`: the current track once (exit 6 when nothing plays), or with --follow one line per
// track change from /v1/images/ws until interrupted.

interface LastOptions extends ClientOptions {
  format?: string;
  follow?: boolean;
  channel?: string;
}

const EXAMPLES = `
Examples:
  $ svc last
  Daft Punk - One More Time (Discovery, 2001)
  $ svc last --format '{artist} - {title} [{bpm} BPM]'
  $ svc last --json | jq -r .genre
  $ svc last --follow --format '{artist} - {title}' | while IFS= read -r l; do echo "$l" > np.txt; done
  $ svc last; [ $? -eq 6 ] && echo 'nothing playing'

--format: {field} or {{field}} is any field of the /v1/last object (artist, title, album, date, genre,
bpm, ...; {year} is the year of date); a missing field renders empty; every brace belongs to a placeholder.`;

export function registerLast(program: Command, ctx: CliContext, setResult: SetResult): void {
  const command = program.command('last').description('print the track playing now (exit 6 when nothing is playing)');
  addClientOptions(command, 10)
    .addOption(new Option('--format <template>', 'print with a template such as "{artist} - {title}"').conflicts('json'))
    .option('-f, --follow', 'keep printing: the current track, then one line per track change, until interrupted')
    .option(CHANNEL_OPTION, "the channel's track (docs/channels.md); without it, what /v1/last shows")
    .addHelpText('after', EXAMPLES)
    .action((options: LastOptions) => setResult(runLast(options, ctx)));
}

async function runLast(options: LastOptions, ctx: CliContext): Promise<number> {
  const style = chooseTrackStyle(options, ctx.io);
  const client = await createClient(options);
  const channel = options.channel;
  if (options.follow) return follow(client, style, ctx, channel);

  const last = withChannel('v1/last', channel);
  const answer = await client.getJson(last);
  if (!isPlainObject(answer.json)) {
    throw new CliError(`unexpected answer from ${client.endpoint(last).href}: not a JSON object`, EXIT.SERVER_ERROR);
  }
  if (Object.keys(answer.json).length === 0) {
    // Scripts read the exit code; only a person at a terminal gets the words.
    if (ctx.io.stderrIsTTY) ctx.io.err('svc: nothing playing');
    return EXIT.NOTHING_PLAYING;
  }
  ctx.io.out(renderTrack(answer.json, style));
  return EXIT.OK;
}

/**
 * Every track once, in dbid order (docs/cli.md "`svc last`"): after a reconnect it first prints what
 * was stored meanwhile (catch-up.ts), and a pushed track older than the last one printed (an
 * instance behind the others) is passed over. A new version of the last track (enriched) is printed.
 */
async function follow(client: SvcClient, style: TrackStyle, ctx: CliContext, channel: string | undefined): Promise<number> {
  let shownTrack: string | undefined;
  let lastDbid = -1;
  const stop = ctx.untilInterrupted();
  const note = (message: string) => ctx.io.err(`svc: ${message}`);
  const print = (dbid: number, track: Record<string, unknown>) => {
    const identity = trackIdentity({ dbid, track });
    if (dbid < lastDbid || identity === shownTrack) return;
    shownTrack = identity;
    lastDbid = dbid;
    ctx.io.out(renderTrack(track, style));
  };
  await followImageStream({
    url: client.wsEndpoint(withChannel('v1/images/ws', channel)),
    connectTimeoutMs: client.settings.timeoutMs,
    ...(client.settings.configSource === undefined ? {} : { configSource: client.settings.configSource }),
    stop,
    note,
    async onReconnected() {
      if (lastDbid < 0) return;
      const caughtUp = await catchUpAfter(client, lastDbid, stop);
      for (const message of caughtUp.notes) note(message);
      if (caughtUp.restarted) {
        note(`the server's records start over (its newest dbid is below ${lastDbid}); following from its current track`);
        lastDbid = -1;
      }
      for (const track of caughtUp.tracks) if (typeof track.dbid === 'number' && (channel === undefined || track.channel === channel)) print(track.dbid, track);
    },
    async onFrame(frame) {
      if (!isTrackFrame(frame)) return;
      // An older record than the last printed is current again only when the newer one was deleted
      // (an instance behind the others pushes old ones too): the server's /v1/last tells which.
      if (frame.dbid < lastDbid && (await currentDbid(client, channel)) === frame.dbid) lastDbid = frame.dbid;
      // The server pushes the current track on every (re)connect: print each version of a track once.
      print(frame.dbid, frame.track);
    },
  });
  return EXIT.OK;
}

/** The dbid /v1/last names now, or undefined when it cannot be read. */
async function currentDbid(client: SvcClient, channel: string | undefined): Promise<number | undefined> {
  try {
    const answer = await client.getJson(withChannel('v1/last', channel));
    return isPlainObject(answer.json) && typeof answer.json.dbid === 'number' ? answer.json.dbid : undefined;
  } catch {
    return undefined;
  }
}
