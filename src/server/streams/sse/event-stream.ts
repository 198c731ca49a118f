import type { ServerResponse } from 'node:http';
import type { TrackRecord } from '../../../domain/track';
import { AppError, errorMessage } from '../../../errors';
import { throttledLog, type Logger } from '../../../log';
import type { NowPlaying } from '../../../domain/current-track';
import type { TrackStore } from '../../../store/tracks';
import type { QueueBudget } from '../../guards/queue-budget';
import { createFanOut } from '../fan-out';
import type { WorkPool } from '../../guards/work-pool';
import { budgetedQueuedBytes } from '../ws/budgeted-queue';
import type { QueuedBytes } from '../ws/outbox';
import { HEARTBEAT, MAX_REPLAY, OPENING, busyAnswer, busyRetryMs, gapEvent, namedEvent, recordBody, trackEvent } from './frames';

// GET /v1/events (docs/chat-bots-and-obs.md "Server-Sent Events"): every change of the current
// track (and every update of it) as a `track` event to every reader. It hangs off NowPlaying's
// events, which other instances feed too (app/other-instances.ts), so it works across
// instances. A reconnecting reader names the last dbid it saw and first gets what it missed.
//
// A replay is never silently cut (docs/several-instances.md "Resuming streams"): its first piece
// is read before the stream opens, so a replay that cannot be served now is a short stream that
// tells the reader to come back with its Last-Event-ID (frames.ts busyAnswer), never an error
// status, which would end a browser's EventSource for good. Each reader remembers the last dbid written to it: replayed
// and live events meet in strictly increasing dbid order, each once, also on an instance whose
// own current track lags the database (an update of the last record sent is sent again; a
// deletion announces the record that is current again). Unsent bytes count in
// limits.maxQueuedBytes like a WebSocket reader's: a reader that stops reading and would hold
// more than its share is closed, never buffered without end; a replay writes on only as its
// reader takes what it has. One address runs at most maxReplaysPerClient replays at once (each
// holds a piece of records while its reader takes them): past it, a replay gets the busy answer
// and comes back, so many readers of one address never hold the memory and the turns of all.

/** A reader may hold this much unsent before a further event closes it (an empty queue takes any one event). */
const MAX_UNSENT_BYTES_PER_READER = 1024 * 1024;
const HEARTBEAT_MS = 15_000;
/** Pieces of MAX_REPLAY records replayed on one connection; past them, a gap marker and the newest records. */
export const MAX_REPLAY_PIECES = 5;
/** Replayed events go out in writes of about this size, one per event-loop turn. */
const REPLAY_WRITE_BYTES = 16 * 1024;
/** Replayed bytes written in one event-loop turn by all readers together; past them, the rest wait for the next turn. */
const REPLAY_BYTES_PER_TURN = 1024 * 1024;
/** Replays one client (address) runs at once, unless EventStreamOptions.maxReplaysPerClient says otherwise. */
export const MAX_REPLAYS_PER_CLIENT = 2;
/** Live records held for a reader while its replay runs; past it, the replay reads them from the store. */
const MAX_PENDING = MAX_REPLAY;
/** The keep-alive comment, encoded once for every reader. */
const HEARTBEAT_BYTES = Buffer.from(HEARTBEAT);

export interface EventStreamOptions {
  nowPlaying: NowPlaying;
  /** `version` (TrackStore.version): with it, readers asking for the same piece at one version share one read. */
  tracks: Pick<TrackStore, 'since' | 'history'> & Partial<Pick<TrackStore, 'version'>>;
  budget: QueueBudget;
  /** A replay reads up to MAX_REPLAY records per piece: each piece waits its turn with the history pages. */
  pool: WorkPool;
  logger: Logger;
  /** Spreads the `retry:` of busy answers (frames.ts busyRetryMs); Math.random unless given. */
  random?: () => number;
  /** Replays one client runs at once (MAX_REPLAYS_PER_CLIENT unless given). */
  maxReplaysPerClient?: number;
}

/** Hands the response to a stream whose first replay piece is read. */
export type OpenStream = (response: ServerResponse) => void;

export interface EventStream {
  /**
   * Prepares a stream for a reader who saw everything up to `since` (undefined: the current
   * track only) and reads the first replay piece in the pool, as `client`'s turn. When the pool
   * cannot serve it now, the result answers the busy form (frames.ts busyAnswer): the current
   * track and the reader's own id, then the end, so that it comes back with its Last-Event-ID.
   * The caller writes the 200 and its headers, then calls the result.
   */
  open(since: number | undefined, client: string, gone?: AbortSignal): Promise<OpenStream>;
  readerCount(): number;
  /** Sends a named event without an id (a song request's, docs/song-requests.md) to every reader that is live. */
  announce(event: string, data: object): void;
  /** Bytes written to readers that their sockets have not taken yet (what a slow reader costs). */
  unsentBytes(): number;
  /** Readers whose socket has not taken what was written, so their replay waits for them (a count, for tests' signals). */
  waitingReaders(): number;
  /** Ends every stream (a reader reconnects to whichever instance is up). */
  close(): void;
}

interface LiveEvent {
  dbid: number;
  text: Buffer;
  body: string;
}

interface Reader {
  /** null until the first replay piece is read and the caller hands the response over. */
  response: ServerResponse | null;
  queued: QueuedBytes;
  /** The newest dbid written to this reader: live events below it are never sent. */
  lastSent: number;
  /** The body last written for `lastSent` (undefined: the reader's own Last-Event-ID): an update of that record is sent only when it differs. */
  lastBody: string | undefined;
  /** While replaying: the live records heard meanwhile (the newest version of each); null once live. */
  pending: Map<number, LiveEvent> | null;
  /** More live records came during the replay than are held: the replay reads on from the store. */
  pendingOverflow: boolean;
  /** The client whose replay budget this reader's replay takes a place of, until it is live or gone. */
  replayOf: string | undefined;
}

interface Piece {
  records: TrackRecord[];
  /** More records follow the last one of this piece. */
  more: boolean;
}

/** The readers of one stream and how bytes reach them, in order and within their share of the budget. */
class Readers {
  readonly all = new Set<Reader>();
  /** Replays running per client. */
  private readonly replays = new Map<string, number>();
  private readonly report: (key: string, message: string) => void;

  constructor(logger: Logger) {
    this.report = throttledLog((message) => logger.warn(message));
  }

  warn(key: string, message: string): void {
    this.report(key, message);
  }

  /** Takes one of `client`'s replay places for the reader; false when all `max` are taken. */
  startReplay(reader: Reader, client: string, max: number): boolean {
    const running = this.replays.get(client) ?? 0;
    if (running >= max) return false;
    this.replays.set(client, running + 1);
    reader.replayOf = client;
    return true;
  }

  /** Gives the reader's replay place back (live, ended or gone); once. */
  endReplay(reader: Reader): void {
    const client = reader.replayOf;
    if (client === undefined) return;
    reader.replayOf = undefined;
    const running = (this.replays.get(client) ?? 1) - 1;
    if (running > 0) this.replays.set(client, running);
    else this.replays.delete(client);
  }

  /**
   * Closes a reader's stream. `reset`: a reader that stopped reading is reset (TCP RST), so the
   * kernel frees what its socket still holds for it at once instead of trying to send it on.
   */
  drop(reader: Reader, reset = false): void {
    this.endReplay(reader);
    if (!this.all.delete(reader)) return;
    reader.queued.release();
    const response = reader.response;
    if (!response || response.destroyed) return;
    if (reset && !response.socket?.destroyed) response.socket?.resetAndDestroy();
    response.destroy();
  }

  /** Ends a stream without an error: the reader reconnects with the last id it got. */
  end(reader: Reader): void {
    this.endReplay(reader);
    if (!this.all.delete(reader)) return;
    reader.queued.release();
    reader.response?.end();
  }

  write(reader: Reader, text: string | Buffer): boolean {
    const response = reader.response;
    if (!response || !this.all.has(reader)) return false;
    const bytes = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
    if (!reader.queued.pushFits(bytes)) {
      this.report('slow', `events: a reader is too slow (${reader.queued.total()} bytes unsent); closing it (limits.maxQueuedBytes)`);
      this.drop(reader, true);
      return false;
    }
    reader.queued.add('push', bytes);
    response.write(text, () => reader.queued.remove('push', bytes));
    return true;
  }

  /** Writes one record's event when it moves the reader forward (or updates the last record sent). */
  writeInOrder(reader: Reader, event: LiveEvent): void {
    const newer = event.dbid > reader.lastSent;
    // The record named by Last-Event-ID was seen in some version: only updates heard since are news.
    const update = event.dbid === reader.lastSent && reader.lastBody !== undefined && event.body !== reader.lastBody;
    if ((newer || update) && this.write(reader, event.text)) this.sent(reader, event);
  }

  /** Replayed events, in dbid order, ending with `last`. */
  writeReplayed(reader: Reader, text: Buffer, last: LiveEvent): void {
    if (this.write(reader, text)) this.sent(reader, last);
  }

  /** A deletion made an older record current again: announced as such, the one step back. */
  writeStepBack(reader: Reader, event: LiveEvent): void {
    if (reader.pending !== null || event.dbid >= reader.lastSent) return;
    if (this.write(reader, event.text)) this.sent(reader, event);
  }

  private sent(reader: Reader, event: LiveEvent): void {
    reader.lastSent = event.dbid;
    reader.lastBody = event.body;
  }
}

export function createEventStream(options: EventStreamOptions): EventStream {
  const readers = new Readers(options.logger);
  const fanOut = createFanOut<Reader>();
  const liveEvent = (): LiveEvent | undefined => {
    const record = options.nowPlaying.current();
    if (!record) return undefined;
    const body = options.nowPlaying.snapshot().body;
    // Serialized and encoded once for every reader.
    return { dbid: record.dbid, body, text: Buffer.from(trackEvent(record.dbid, body)) };
  };
  const onChange = () => {
    const event = liveEvent();
    if (!event) return;
    for (const reader of readers.all) holdWhileReplaying(reader, event);
    // Written after the current turn, in slices (fan-out.ts).
    fanOut.send(readers.all, (reader) => {
      if (reader.pending === null) readers.writeInOrder(reader, event);
    });
  };
  const onRetracted = () => {
    const event = liveEvent();
    if (event) fanOut.send(readers.all, (reader) => readers.writeStepBack(reader, event));
  };
  options.nowPlaying.on('track-changed', onChange);
  options.nowPlaying.on('track-updated', onChange);
  options.nowPlaying.on('track-retracted', onRetracted);

  const heartbeat = setInterval(() => {
    for (const reader of readers.all) readers.write(reader, HEARTBEAT_BYTES);
  }, HEARTBEAT_MS);
  heartbeat.unref();

  const replays = new Replays(options, readers, liveEvent);
  return {
    open: (since, client, gone) => replays.open(since, client, gone),
    readerCount: () => [...readers.all].filter((reader) => reader.response !== null).length,
    announce(event, data) {
      const text = Buffer.from(namedEvent(event, data));
      // Live readers only: one still replaying gets the queue's state from GET /v1/requests.
      fanOut.send(readers.all, (reader) => {
        if (reader.pending === null) readers.write(reader, text);
      });
    },
    unsentBytes: () => [...readers.all].reduce((sum, reader) => sum + (reader.response?.writableLength ?? 0), 0),
    waitingReaders: () => [...readers.all].filter((reader) => reader.response?.writableNeedDrain === true).length,
    close() {
      clearInterval(heartbeat);
      fanOut.clear();
      options.nowPlaying.off('track-changed', onChange);
      options.nowPlaying.off('track-updated', onChange);
      options.nowPlaying.off('track-retracted', onRetracted);
      for (const reader of [...readers.all]) readers.end(reader);
    },
  };
}

/** Opening streams: the first replay piece before the stream opens, the rest in paced pieces, then live. */
class Replays {
  constructor(
    private readonly options: EventStreamOptions,
    private readonly readers: Readers,
    private readonly liveEvent: () => LiveEvent | undefined,
  ) {}

  async open(since: number | undefined, client: string, gone: AbortSignal | undefined): Promise<OpenStream> {
    const reader: Reader = {
      response: null,
      queued: budgetedQueuedBytes(MAX_UNSENT_BYTES_PER_READER, this.options.budget),
      lastSent: since ?? -1,
      lastBody: undefined,
      pending: since === undefined ? null : new Map(),
      pendingOverflow: false,
      replayOf: undefined,
    };
    if (since !== undefined && !this.readers.startReplay(reader, client, this.options.maxReplaysPerClient ?? MAX_REPLAYS_PER_CLIENT)) {
      this.readers.warn(
        'replays',
        `events: ${client} has ${this.options.maxReplaysPerClient ?? MAX_REPLAYS_PER_CLIENT} replays running; another is told to come back`,
      );
      return (response) => this.answerBusy(response, since);
    }
    // Listening before the store is read: a record stored meanwhile is either read or held.
    this.readers.all.add(reader);
    let first: Piece | undefined;
    try {
      if (since !== undefined) first = await this.readPiece(since, client, gone);
    } catch (error) {
      this.readers.drop(reader);
      if (!isBusy(error) || since === undefined) throw error;
      this.readers.warn('busy', 'events: replays put off while the server is busy (the readers are told to come back with their last id)');
      return (response) => this.answerBusy(response, since);
    }
    return (response) => this.start(reader, response, first, client, gone);
  }

  /** A replay the busy pool cannot serve now: the current track and the reader's own id, then the end (frames.ts busyAnswer). */
  private answerBusy(response: ServerResponse, since: number): void {
    if (response.destroyed) return;
    response.on('error', () => response.destroy());
    response.end(busyAnswer(since, busyRetryMs(this.options.random?.() ?? Math.random()), this.liveEvent()?.body));
  }

  private start(reader: Reader, response: ServerResponse, first: Piece | undefined, client: string, gone: AbortSignal | undefined): void {
    reader.response = response;
    // A reader who hung up while its first piece was read: its 'close' has been, and will not come again.
    if (response.destroyed) {
      this.readers.drop(reader);
      return;
    }
    response.on('close', () => this.readers.drop(reader));
    response.on('error', () => this.readers.drop(reader));
    if (!this.readers.all.has(reader)) {
      response.end();
      return;
    }
    this.readers.write(reader, OPENING);
    if (first === undefined) {
      this.goLive(reader);
      return;
    }
    this.replay(reader, first, client, gone).catch((error: unknown) => {
      // A hung-up reader, or a later piece the busy pool refused: the stream ends and the
      // reader reconnects with the last id it got, so nothing is skipped.
      if (!this.readers.all.has(reader)) return;
      if (!isBusy(error)) this.options.logger.warn(`events: replay after ${reader.lastSent} failed: ${errorMessage(error)}`);
      else this.readers.write(reader, `retry: ${busyRetryMs(this.options.random?.() ?? Math.random())}\n\n`);
      this.readers.end(reader);
    });
  }

  private readonly shared = new SharedPieces();
  private readonly turns = new TurnBudget(REPLAY_BYTES_PER_TURN);

  /**
   * The records after `after`, in the pool as `client`'s turn, or the piece another reader asked
   * for at the same store version: 200 readers back from one outage read their missed records
   * once, and share their objects and encoded events (eventOf), instead of holding 200 copies.
   */
  private readPiece(after: number, client: string, gone: AbortSignal | undefined): Promise<Piece> {
    const version = this.options.tracks.version?.();
    const known = version === undefined ? undefined : this.shared.get(after, version);
    if (known) return known;
    const read = this.readOwnPiece(after, client, gone);
    if (version !== undefined) this.shared.set(after, version, read);
    return read;
  }

  private readOwnPiece(after: number, client: string, gone: AbortSignal | undefined): Promise<Piece> {
    return this.options.pool.run(
      client,
      async () => {
        const records = await this.options.tracks.since(after, MAX_REPLAY + 1);
        return { records: records.slice(0, MAX_REPLAY), more: records.length > MAX_REPLAY };
      },
      gone ? () => gone : undefined,
    );
  }

  private async replay(reader: Reader, first: Piece, client: string, gone: AbortSignal | undefined): Promise<void> {
    let piece = first;
    for (let pieces = 1; ; pieces += 1) {
      await this.writeRecords(reader, piece.records);
      if (!this.readers.all.has(reader)) return;
      const overflow = reader.pendingOverflow;
      reader.pendingOverflow = false;
      if (!piece.more && !overflow) break;
      if (pieces >= MAX_REPLAY_PIECES) {
        await this.jumpToNewest(reader);
        break;
      }
      piece = await this.readPiece(reader.lastSent, client, gone);
    }
    this.goLive(reader);
  }

  /**
   * The records in writes of about REPLAY_WRITE_BYTES, each once the one before has left for the
   * socket (a replay goes at its reader's pace), with the event loop free in between: hundreds of
   * readers catching up at once never hold a cheap answer (/v1/last, /v1/status) up for long. The
   * records come in dbid order and live events wait in `pending` meanwhile, so the order holds.
   */
  private async writeRecords(reader: Reader, records: readonly TrackRecord[]): Promise<void> {
    let batch: Buffer[] = [];
    let bytes = 0;
    let last: LiveEvent | undefined;
    const flush = async () => {
      if (!last) return;
      await this.turns.take(bytes);
      this.readers.writeReplayed(reader, batch.length === 1 ? batch[0] : Buffer.concat(batch, bytes), last);
      batch = [];
      bytes = 0;
      last = undefined;
      await drained(reader);
      await nextTurn();
    };
    for (const record of records) {
      if (record.dbid <= (last?.dbid ?? reader.lastSent)) continue;
      last = eventOf(record);
      batch.push(last.text);
      bytes += last.text.length;
      if (bytes >= REPLAY_WRITE_BYTES) await flush();
    }
    await flush();
  }

  /** Past the replay budget: a gap marker, then the newest records (docs/chat-bots-and-obs.md "Server-Sent Events"). */
  private async jumpToNewest(reader: Reader): Promise<void> {
    const newest = (await this.options.tracks.history({ limit: MAX_REPLAY })).records.filter((record) => record.dbid > reader.lastSent).reverse();
    const resumesAt = newest[0]?.dbid;
    if (resumesAt !== undefined) this.readers.write(reader, gapEvent(reader.lastSent, resumesAt));
    await this.writeRecords(reader, newest);
  }

  /** The live records heard during the replay, in dbid order, then every live event as it comes. */
  private goLive(reader: Reader): void {
    this.readers.endReplay(reader);
    const pending = [...(reader.pending?.values() ?? [])].sort((a, b) => a.dbid - b.dbid);
    reader.pending = null;
    for (const event of pending) this.readers.writeInOrder(reader, event);
    const current = this.liveEvent();
    if (current) this.readers.writeInOrder(reader, current);
  }
}

function isBusy(error: unknown): boolean {
  return error instanceof AppError && error.code === 'SERVER_BUSY';
}

function holdWhileReplaying(reader: Reader, event: LiveEvent): void {
  if (reader.pending === null || event.dbid <= reader.lastSent) return;
  if (reader.pending.size >= MAX_PENDING && !reader.pending.has(event.dbid)) {
    // They are all in the store: the replay reads on past its last piece instead.
    reader.pending.clear();
    reader.pendingOverflow = true;
  }
  reader.pending.set(event.dbid, event);
}

/** Each record's event, encoded once however many readers a shared piece goes to. */
const encoded = new WeakMap<TrackRecord, LiveEvent>();

function eventOf(record: TrackRecord): LiveEvent {
  const known = encoded.get(record);
  if (known) return known;
  const body = recordBody(record);
  const event = { dbid: record.dbid, text: Buffer.from(trackEvent(record.dbid, body)), body };
  encoded.set(record, event);
  return event;
}

/**
 * The replayed bytes of one event-loop turn, for all readers together: 200 readers catching up on
 * 58 KB records wrote 11 MB in one turn, and a new connection's /v1/status waited behind each such
 * turn. Past the budget a write waits for the next turn (its check phase, after the poll phase
 * has read new connections and requests), first come, first served.
 */
class TurnBudget {
  private used = 0;
  private waiting: (() => void)[] = [];
  private scheduled = false;

  constructor(private readonly bytesPerTurn: number) {}

  async take(bytes: number): Promise<void> {
    // A write larger than the budget still goes, alone in its turn.
    while (this.used > 0 && this.used + bytes > this.bytesPerTurn) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.used += bytes;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.used = 0;
      const woken = this.waiting;
      this.waiting = [];
      for (const wake of woken) wake();
    });
  }
}

/** Pieces kept for readers that ask for the same one; a few, the newest, so a large replay costs one copy. */
const MOST_SHARED_PIECES = 2;

/**
 * Replay pieces by their `after`, each valid at the store version it was asked at: any write
 * (a new record, an update, a deletion, on PostgreSQL also another instance's) makes them stale,
 * so a shared piece holds what a read of its own would. A refused read is not kept.
 */
class SharedPieces {
  private readonly pieces = new Map<number, { version: number; piece: Promise<Piece> }>();

  get(after: number, version: number): Promise<Piece> | undefined {
    const entry = this.pieces.get(after);
    return entry?.version === version ? entry.piece : undefined;
  }

  set(after: number, version: number, piece: Promise<Piece>): void {
    for (const [key, entry] of this.pieces) if (entry.version !== version) this.pieces.delete(key);
    this.pieces.delete(after);
    this.pieces.set(after, { version, piece });
    while (this.pieces.size > MOST_SHARED_PIECES) this.pieces.delete(this.pieces.keys().next().value as number);
    piece.catch(() => {
      if (this.pieces.get(after)?.piece === piece) this.pieces.delete(after);
    });
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves once the reader's socket has taken what was written (or it is gone): a replay goes at the reader's pace. */
function drained(reader: Reader): Promise<void> {
  const response = reader.response;
  if (!response || !response.writableNeedDrain || response.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.once('drain', done);
    response.once('close', done);
  });
}
