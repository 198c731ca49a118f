import type { OutputType } from '../config/schema';
import { sleep } from '../signals';
import { trackDataOf, type Delivery, type Output, type TrackData } from './output';
import { listenVerdict, neverScrobbled, playOf, stillPlaying, type Play } from './scrobble';

// The part the two scrobblers share (docs/outputs.md "Scrobbling: what counts as a listen"):
// each track change is one message, in dbid order, never superseded. Its delivery scrobbles the
// play that just ended (when it counts as a listen) and then announces the new one as "now
// playing". The play that ended is the record stored before the new one, read from the store
// when the change is sent, so a `kind` or listener count written meanwhile is seen, and a
// restart or another instance having sent the messages between changes nothing. A record that
// began long before the new one (svc was down) is not a play that just ended.

/** One scrobbling service: ListenBrainz or Last.fm. */
export interface ScrobbleService {
  nowPlaying(play: Play, signal: AbortSignal): Promise<Delivery>;
  scrobble(play: Play, signal: AbortSignal): Promise<Delivery>;
}

/** The store's records, for the scrobblers. */
export interface RecordLookup {
  /** The record stored before `dbid` (history order) and when it arrived, ms since the epoch. */
  before(dbid: number): Promise<{ data: TrackData; receivedAtMs: number } | undefined>;
}

/** A play is at most this long, or its duration and ten minutes when that is longer. */
const LONGEST_PLAY_MS = 60 * 60 * 1000;
/** Plays already scrobbled by this output, so that a retried message does not send one twice. */
const REMEMBERED_SCROBBLES = 16;

export interface ScrobblerOptions {
  name: string;
  type: Extract<OutputType, 'listenbrainz' | 'lastfm'>;
  target: string;
  service: ScrobbleService;
  /** Absent (tests of one output alone): the previous message's record is the play that ended. */
  lookup?: RecordLookup;
  now?: () => number;
}

interface Ended {
  play: Play | undefined;
  data: TrackData;
}

export function createScrobblerOutput(options: ScrobblerOptions): Output {
  const now = options.now ?? Date.now;
  const scrobbled: number[] = [];
  /** The message being sent and what became of the play before it (a retry keeps it). */
  let sending: { dbid: number; note: string } | undefined;
  let lastMessage: Ended | undefined;

  async function endedBefore(dbid: number, startedAtMs: number): Promise<Ended | undefined> {
    if (!options.lookup) return lastMessage?.data.dbid === dbid ? undefined : lastMessage;
    const before = await options.lookup.before(dbid);
    if (!before) return undefined;
    const play = playOf(before.data, before.receivedAtMs);
    const longest = Math.max(LONGEST_PLAY_MS, ((play?.durationSeconds ?? 0) + 600) * 1000);
    if (play && startedAtMs - play.startedAtMs > longest) return undefined;
    return { play, data: before.data };
  }

  /** The verdict on the play that `startedAtMs` ended; sends it when it counts. */
  async function finishPlayBefore(dbid: number, startedAtMs: number, signal: AbortSignal): Promise<{ delivery?: Delivery; note: string }> {
    const ended = await endedBefore(dbid, startedAtMs);
    if (!ended || scrobbled.includes(ended.data.dbid)) return { note: '' };
    const why = neverScrobbled(ended.data) ?? (ended.play ? verdictWhy(ended.play, startedAtMs) : 'no artist or title');
    if (why !== undefined || !ended.play) return { note: `${ended.data.dbid} not scrobbled: ${why ?? 'no artist or title'}` };
    const delivery = await options.service.scrobble(ended.play, signal);
    if (delivery.outcome !== 'delivered') return { delivery: withContext(delivery, `scrobble of ${ended.data.dbid}`), note: '' };
    scrobbled.push(ended.data.dbid);
    if (scrobbled.length > REMEMBERED_SCROBBLES) scrobbled.shift();
    return { note: `scrobbled ${ended.data.dbid}${delivery.receipt ? ` (${delivery.receipt})` : ''}` };
  }

  return {
    name: options.name,
    type: options.type,
    feeds: { changed: 'track.changed' },
    latestOnly: false,
    target: options.target,
    async send(message, signal) {
      const data = trackDataOf(message);
      const play = playOf(data, message.createdAt);
      if (sending?.dbid !== data.dbid) {
        const finished = await finishPlayBefore(data.dbid, play?.startedAtMs ?? message.createdAt, signal);
        if (finished.delivery) return finished.delivery;
        sending = { dbid: data.dbid, note: finished.note };
        lastMessage = { play, data };
      }
      // What happened to this track first (the table shows the receipt's start), then to the one before.
      const notes: string[] = [];
      const why = neverScrobbled(data);
      if (why) notes.push(`${data.dbid} skipped: ${why}`);
      else if (play && stillPlaying(play, message.createdAt, now())) {
        const delivery = await options.service.nowPlaying(play, signal);
        if (delivery.outcome !== 'delivered') return withContext(delivery, 'now playing');
        notes.push(`now playing ${data.dbid}`);
      }
      notes.push(sending.note);
      return { outcome: 'delivered', receipt: notes.filter(Boolean).join('; ') || `${data.dbid} remembered` };
    },
    close: () => Promise.resolve(),
  };
}

function verdictWhy(play: Play, endedAtMs: number): string | undefined {
  const verdict = listenVerdict(play, endedAtMs);
  return verdict.counts ? undefined : verdict.why;
}

function withContext(delivery: Delivery, what: string): Delivery {
  return delivery.outcome === 'delivered' ? delivery : { ...delivery, error: `${what}: ${delivery.error}` };
}

/** Time as the request spacing sees it; tests pass a clock whose waits they see (test/helpers/manual-clock.ts). */
export interface SpacingClock {
  now(): number;
  /** Resolves after `ms`; rejects when `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<void>;
}

const realClock: SpacingClock = { now: () => Date.now(), wait: (ms, signal) => sleep(ms, signal) };

/**
 * One request at a time with a gap between them, and a wait the service asked for (its rate
 * limit). A wait that would not fit in the attempt is answered as a retry at that time.
 */
export class RequestSpacing {
  private notBefore = 0;

  constructor(
    private readonly gapMs: number,
    private readonly clock: SpacingClock = realClock,
  ) {}

  /** Waits for the turn; undefined when it came, else how long until it comes. */
  async turn(signal: AbortSignal, budgetMs = 5000): Promise<number | undefined> {
    const waitMs = this.notBefore - this.clock.now();
    if (waitMs > budgetMs) return waitMs;
    if (waitMs > 0) await this.clock.wait(waitMs, signal).catch(() => undefined);
    if (signal.aborted) return this.gapMs;
    this.notBefore = this.clock.now() + this.gapMs;
    return undefined;
  }

  /** An answer came: the gap counts from here, so calls arrive at least the gap apart. */
  answered(): void {
    this.notBefore = Math.max(this.notBefore, this.clock.now() + this.gapMs);
  }

  /** The service said when its window opens again. */
  holdFor(ms: number): void {
    this.notBefore = Math.max(this.notBefore, this.clock.now() + ms);
  }
}
