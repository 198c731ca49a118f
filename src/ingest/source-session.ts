import type { Socket } from 'node:net';
import type { Logger } from '../log';
import type { ByteBudget } from './byte-budget';
import { ChunkedBodyError, ChunkedDecoder } from './chunked-body';
import { fieldsFromComments, isWantedComment } from './comment-fields';
import { OggStreamError } from './ogg-pages';
import { OggTrackReader } from './ogg-tracks';
import type { RequestHead } from './source-protocol';
import { describeTrack, logFailure, type SubmitFields } from './submitter';

// One connected source: an Ogg stream's comment headers become submissions, in the order they
// came. An MP3/AAC stream carries no tags (its titles come through /admin/metadata). The audio
// itself goes to the recognition's tap when there is one (docs/recognition.md "Listening"),
// else it is dropped.

/** Tracks found but not yet submitted, per source; more is a client outrunning the pipeline. */
const MAX_WAITING_TRACKS = 8;

export interface SourceSessionDeps {
  submit: SubmitFields;
  logger: Logger;
  /** This source's share of the memory budget for comment headers (listener.ts). */
  budget: ByteBudget;
  /** One line per kind per minute: lines a source can repeat at will are summarised. */
  report: (kind: string, message: string) => void;
  /** The source went away: the play on its mount's channel ends (docs/play-log.md "Air times"). */
  disconnected?: (channel: string) => Promise<unknown>;
  /** Where the audio of a source goes (docs/recognition.md "Listening"); absent or null: nowhere. */
  audio?: AudioTap;
}

/** What listens to a source's audio: its bytes as they come, then the end. */
export interface AudioSink {
  write(bytes: Buffer): void;
  /** The source is gone; `reason` says so where the stream's status is shown. */
  end(reason?: string): void;
}

/** Opens a sink for a source on `mount` sending `contentType` ('' when it sent none); null: not listened to. */
export type AudioTap = (mount: string, contentType: string) => AudioSink | null;

export function runSourceSession(socket: Socket, head: RequestHead, mount: string, firstBytes: Buffer, deps: SourceSessionDeps): void {
  const label = `icecast source ${mount.slice(0, 256)} from ${socket.remoteAddress ?? 'unknown'}`;
  const chunked = /\bchunked\b/i.test(head.headers.get('transfer-encoding') ?? '') ? new ChunkedDecoder() : null;
  const contentType = (head.headers.get('content-type') ?? '').toLowerCase();
  const newReader = () => new OggTrackReader({ wanted: isWantedComment, budget: deps.budget });
  let ogg: OggTrackReader | null | undefined = isOggType(contentType) ? newReader() : contentType === '' ? undefined : null;
  let waiting = 0;
  let queue: Promise<void> = Promise.resolve();
  let refused = false;
  const sink = deps.audio?.(mount, contentType) ?? null;

  const enqueue = (fields: Record<string, string>) => {
    if (waiting >= MAX_WAITING_TRACKS) {
      deps.report('tracks-dropped', `${label}: track ${describeTrack(fields)} dropped, ${MAX_WAITING_TRACKS} tracks already waiting`);
      return;
    }
    waiting++;
    queue = queue.then(async () => {
      try {
        // The mount is the channel of the plays it carries (docs/play-log.md "Channels").
        const result = await deps.submit({ ...fields, channel: mount });
        deps.logger.info(`${label}: track ${describeTrack(fields)} stored as dbid ${result.dbid}`);
      } catch (error) {
        logFailure(deps.logger, `${label}: track ${describeTrack(fields)}`, error);
      } finally {
        waiting--;
      }
    });
  };

  const readBody = (body: Buffer) => {
    if (body.length === 0) return;
    sink?.write(body);
    // No Content-Type: an Ogg stream is known by its first capture pattern.
    if (ogg === undefined) ogg = body.subarray(0, 4).toString('latin1') === 'OggS' ? newReader() : null;
    if (!ogg) return;
    for (const track of ogg.push(body)) {
      const fields = fieldsFromComments(track.comments);
      if (Object.keys(fields).length > 0) enqueue(fields);
      else deps.report('no-tags', `${label}: a ${track.codec} comment header without tags svc reads`);
    }
  };

  const onData = (piece: Buffer) => {
    if (refused) return;
    try {
      for (const body of chunked ? chunked.push(piece) : [piece]) readBody(body);
    } catch (error) {
      if (!(error instanceof OggStreamError || error instanceof ChunkedBodyError)) throw error;
      // The one line for a stream that is not what it claims to be; the connection goes.
      refused = true;
      deps.logger.warn(`${label} closed: not a readable Ogg stream (${error.message})`);
      socket.destroy();
    }
  };

  deps.logger.info(`${label} connected (${contentType || 'no Content-Type'})`);
  socket.on('close', () => {
    if (!refused) deps.logger.info(`${label} disconnected`);
    sink?.end('the source disconnected');
    // After the tracks it sent are stored: the last of them is the play that ends.
    queue = queue.then(async () => {
      await deps.disconnected?.(mount).catch(() => undefined);
    });
  });
  socket.on('data', onData);
  onData(firstBytes);
}

/** The Content-Types Icecast 2.4 reads as Ogg (xiph/Icecast-Server src/format.c). */
function isOggType(contentType: string): boolean {
  return /^(application|audio|video)\/(x-)?ogg\b/.test(contentType);
}
