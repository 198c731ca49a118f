import { CHANNEL_OPTION, withChannel } from '../channel-option';
import { errorMessage } from '../../errors';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import type { SvcClient } from '../client';
import { addClientOptions, createClient, type ClientOptions } from '../client-options';
import type { CliContext, SetResult } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { isImageFrame, isTrackFrame, trackIdentity, type ImageFrame } from '../frames';
import { imageFileName } from '../image-files';
import { followImageStream } from '../image-stream';
import { chooseTrackStyle, humanTrackLine, jsonLine, type Painter } from '../output';
import { BoundedMap } from '../../domain/bounded-map';
import { oneLine } from '../../domain/template';
import { fieldText } from '../../domain/track';

// `svc watch-images`: tails /v1/images/ws, one line per frame (NDJSON with --json);
// --save DIR downloads each announced image as DIR/<key>.<ext> and prints its path.

interface WatchOptions extends ClientOptions {
  save?: string;
  channel?: string;
}

const EXAMPLES = `
Examples:
  $ svc watch-images
  #12 track  Daft Punk - One More Time (Discovery, 2001)
  #12 cover  Daft Punk - Discovery  http://127.0.0.1:8899/cover/9f86d0...
  $ svc watch-images --json | jq -r 'select(.type == "image") | .url'
  $ svc watch-images --save ~/covers | while read -r file; do feh --bg-fill "$file"; done

Prints track frames (once per track) and image frames; other frames (welcome, error, ...)
only with --json. With --save, the text output is just the saved file paths, and --json adds
"file" to each image frame. Reconnects with backoff when the server goes away; Ctrl-C ends it.`;

/** Image frames already handled, so a reconnect does not repeat them. */
const MAX_REMEMBERED_IMAGES = 1000;

export function registerWatchImages(program: Command, ctx: CliContext, setResult: SetResult): void {
  const command = program.command('watch-images').description('tail the image stream (/v1/images/ws) until interrupted');
  addClientOptions(command, 10)
    .option('--save <dir>', 'download each announced image into DIR (named <key>.<ext>) and print its path')
    .option(CHANNEL_OPTION, "that channel's track and images (docs/channels.md)")
    .addHelpText('after', EXAMPLES)
    .action((options: WatchOptions) => setResult(runWatchImages(options, ctx)));
}

async function runWatchImages(options: WatchOptions, ctx: CliContext): Promise<number> {
  const style = chooseTrackStyle({ json: options.json }, ctx.io);
  const paint = style.kind === 'human' ? style.paint : undefined;
  const client = await createClient(options);
  const saveDir = options.save;
  if (saveDir !== undefined) await prepareDirectory(saveDir);

  let shownTrack: string | undefined;
  const shownImages = new BoundedMap<string, true>({ maxEntries: MAX_REMEMBERED_IMAGES });
  const out = (text: string) => ctx.io.out(text);

  await followImageStream({
    url: client.wsEndpoint(withChannel('v1/images/ws', options.channel)),
    connectTimeoutMs: client.settings.timeoutMs,
    ...(client.settings.configSource === undefined ? {} : { configSource: client.settings.configSource }),
    stop: ctx.untilInterrupted(),
    note: (message) => ctx.io.err(`svc: ${message}`),
    async onFrame(frame) {
      if (isTrackFrame(frame)) {
        // The server pushes the current track on every (re)connect: show each version of a track once.
        if (trackIdentity(frame) === shownTrack) return;
        shownTrack = trackIdentity(frame);
        if (!paint) out(jsonLine(frame));
        else if (saveDir === undefined) out(`${paint.faint(`#${frame.dbid}`)} track  ${humanTrackLine(frame.track, paint)}`);
        return;
      }
      if (isImageFrame(frame)) {
        const id = `${frame.dbid} ${frame.category} ${frame.key}`;
        if (shownImages.has(id)) return;
        shownImages.set(id, true);
        if (saveDir !== undefined) {
          const file = await saveImage(client, frame, saveDir);
          out(paint ? file : jsonLine({ ...frame, file }));
        } else {
          out(paint ? imageLine(client, frame, paint) : jsonLine(frame));
        }
        return;
      }
      if (!paint) out(jsonLine(frame));
    },
  });
  return EXIT.OK;
}

async function prepareDirectory(dir: string): Promise<void> {
  try {
    await fs.mkdir(dir, { recursive: true });
    await fs.access(dir, fs.constants.W_OK);
  } catch (error) {
    throw new CliError(`--save: cannot write to ${dir}: ${errorMessage(error)}`, EXIT.USAGE);
  }
}

/** Downloads the image unless DIR already has it; checks the bytes against their key. */
async function saveImage(client: SvcClient, frame: ImageFrame, dir: string): Promise<string> {
  const name = imageFileName(frame.key, frame.mime_type);
  if (!name) throw new CliError(`ignoring an image frame with an invalid key ${JSON.stringify(oneLine(frame.key))}`, EXIT.SERVER_ERROR);
  const file = path.join(dir, name);
  if (await exists(file)) return file;
  let bytes: Buffer;
  try {
    ({ bytes } = await client.download(new URL(frame.url, client.settings.baseUrl)));
  } catch (error) {
    throw new CliError(`cannot save image ${frame.key}: ${errorMessage(error)}`, EXIT.SERVER_ERROR);
  }
  const { createHash } = require('node:crypto') as typeof import('node:crypto');
  if (createHash('sha256').update(bytes).digest('hex') !== frame.key.toLowerCase()) {
    throw new CliError(`image ${frame.key}: the downloaded bytes do not match the key; not saved`, EXIT.SERVER_ERROR);
  }
  // Written aside, then renamed: DIR never holds a half-written image under its final name.
  const partial = `${file}.${process.pid}.part`;
  await fs.writeFile(partial, bytes);
  await fs.rename(partial, file);
  return file;
}

function imageLine(client: SvcClient, frame: ImageFrame, paint: Painter): string {
  const text = (key: string) => oneLine(fieldText(frame, key) ?? '');
  const owner = [text('artist'), text('album') || text('title')].filter(Boolean).join(' - ');
  const url = new URL(frame.url, client.settings.baseUrl).href;
  return [`${paint.faint(`#${frame.dbid}`)} ${oneLine(frame.category)}`, owner, url].filter(Boolean).join('  ');
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}
