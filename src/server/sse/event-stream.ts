import type { ServerResponse } from 'node:http';
import type { TrackRecord } from '../../domain/track';
import { AppError, errorMessage } from '../../errors';
import { throttledLog, type Logger } from '../../log';
import type { NowPlaying } from '../../domain/current-track';
import type { TrackStore } from '../../store/tracks';
import type { QueueBudget } from '../queue-budget';
import { createFanOut } from '../fan-out';
import { requestGone, type WorkPool } from '../work-pool';
import { budgetedQueuedBytes } from '../ws/budgeted-queue';
import type { QueuedBytes } from '../ws/outbox';
import { HEARTBEAT, MAX_REPLAY, OPENING, namedEvent, recordEvent, trackEvent } from './frames';

// GET /v1/events (docs/chat-bots-and-obs.md "Server-Sent Events"): every change of the current
// track (and every update of it) as a `track` event to every reader. It hangs off NowPlaying's
// events, which other instances feed too (server/other-instances.ts), so it works across
// instances. A reconnecting reader names the last dbid it saw and first gets what it missed.
// Unsent bytes count in limits.maxQueuedBytes like a WebSocket reader's: a reader that stops
// reading and would hold more than its share is closed, never buffered without end.

/** A reader may hold this much unsent before a further event closes it (an empty queue takes any one event). */
const MAX_UNSENT_BYTES_PER_READER = 1024 * 1024;
const HEARTBEAT_MS = 15_000;

export interface EventStreamOptions {
  nowPlaying: NowPlaying;
  tracks: Pick<TrackStore, 'since' | 'history'>;
  budget: QueueBudget;
  /** A replay reads up to MAX_REPLAY records: it waits its turn with the history pages. */
  pool: WorkPool;
  logger: Logger;
}

export interface EventStream {
  /** Takes over the response: headers are set by the caller; the stream writes the rest. `client`: whose turn in the pool a replay takes. */
  attach(response: ServerResponse, since: number | undefined, client: string): void;
  readerCount(): number;
  /** Sends a named event without an id (a song request's, docs/song-requests.md) to every reader that is live. */
  announce(event: string, data: object): void;
  /** Bytes written to readers that their sockets have not taken yet (what a slow reader costs). */
  unsentBytes(): number;
  /** Ends every stream (a reader reconnects to whichever instance is up). */
  close(): void;
}

interface Reader {
  response: ServerResponse;
  queued: QueuedBytes;
  /** Replaying missed records: live events wait (the replay ends with the current track). */
  replaying: boolean;
}

export function createEventStream(options: EventStreamOptions): EventStream {
  const readers = new Set<Reader>();
  const report = throttledLog((message) => options.logger.warn(message));

  const drop = (reader: Reader) => {
    if (!readers.delete(reader)) return;
    reader.queued.release();
    if (!reader.response.destroyed) reader.response.destroy();
  };

  const write = (reader: Reader, text: string | Buffer) => {
    const bytes = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
    if (!reader.queued.pushFits(bytes)) {
      report('slow', `events: a reader is too slow (${reader.queued.total()} bytes unsent); closing it (limits.maxQueuedBytes)`);
      drop(reader);
      return;
    }
    reader.queued.add('push', bytes);
    reader.response.write(text, () => reader.queued.remove('push', bytes));
  };

  const fanOut = createFanOut<Reader>();
  const onChange = () => {
    const record = options.nowPlaying.current();
    if (!record) return;
    // Serialized and encoded once for every reader; written after the current turn, in slices (fan-out.ts).
    const event = Buffer.from(trackEvent(record.dbid, options.nowPlaying.snapshot().body));
    fanOut.send(readers, (reader) => {
      if (!reader.replaying && readers.has(reader)) write(reader, event);
    });
  };
  options.nowPlaying.on('track-changed', onChange);
  options.nowPlaying.on('track-updated', onChange);

  const heartbeat = setInterval(() => {
    for (const reader of readers) write(reader, HEARTBEAT);
  }, HEARTBEAT_MS);
  heartbeat.unref();

  const replay = async (reader: Reader, since: number, client: string) => {
    try {
      // Past the pool's queue the reader is still made current, without the records it missed.
      const missed = await options.pool
        .run(
          client,
          () => missedRecords(options.tracks, since),
          () => requestGone(reader.response),
        )
        .catch((error: unknown) => {
          if (!(error instanceof AppError) || error.code !== 'SERVER_BUSY') throw error;
          report('busy', 'events: replays skipped while the server is busy (the readers got the current track)');
          return [];
        });
      const current = options.nowPlaying.current();
      // The current track comes last, once, whatever its place among the missed ones.
      for (const record of missed) if (record.dbid !== current?.dbid && readers.has(reader)) write(reader, recordEvent(record));
      if (current && current.dbid !== since && readers.has(reader)) write(reader, trackEvent(current.dbid, options.nowPlaying.snapshot().body));
    } catch (error) {
      // A reader that hung up while its replay waited: nothing went wrong.
      if (!readers.has(reader)) return;
      options.logger.warn(`events: replay after ${since} failed: ${errorMessage(error)}`);
      drop(reader);
      return;
    }
    reader.replaying = false;
  };

  return {
    attach(response, since, client) {
      const reader: Reader = { response, queued: budgetedQueuedBytes(MAX_UNSENT_BYTES_PER_READER, options.budget), replaying: since !== undefined };
      readers.add(reader);
      response.on('close', () => drop(reader));
      response.on('error', () => drop(reader));
      write(reader, OPENING);
      if (since !== undefined) {
        void replay(reader, since, client);
        return;
      }
      const current = options.nowPlaying.current();
      if (current) write(reader, trackEvent(current.dbid, options.nowPlaying.snapshot().body));
    },
    readerCount: () => readers.size,
    announce(event, data) {
      const text = Buffer.from(namedEvent(event, data));
      fanOut.send(readers, (reader) => {
        if (!reader.replaying && readers.has(reader)) write(reader, text);
      });
    },
    unsentBytes: () => [...readers].reduce((sum, reader) => sum + reader.response.writableLength, 0),
    close() {
      clearInterval(heartbeat);
      fanOut.clear();
      options.nowPlaying.off('track-changed', onChange);
      options.nowPlaying.off('track-updated', onChange);
      for (const reader of [...readers]) {
        readers.delete(reader);
        reader.queued.release();
        reader.response.end();
      }
    },
  };
}

/** The newest MAX_REPLAY records after `since`, oldest first. */
async function missedRecords(tracks: Pick<TrackStore, 'since' | 'history'>, since: number): Promise<TrackRecord[]> {
  const after = await tracks.since(since, MAX_REPLAY + 1);
  if (after.length <= MAX_REPLAY) return after;
  // More were missed than are replayed: the newest ones, so that the reader ends up current.
  const newest = await tracks.history({ limit: MAX_REPLAY });
  return newest.records.filter((record) => record.dbid > since).reverse();
}
