import type { OutputType } from '../config/schema';
import { sleep } from '../signals';
import { trackDataOf, type Delivery, type Output, type TrackData } from './output';
import { listenVerdict, neverScrobbled, playOf, stillPlaying, type Play } from './scrobble';

// The part the two scrobblers share (docs/outputs.md "Scrobbling: what counts as a listen"):
// each track change is one message, in dbid order, never superseded. Its delivery scrobbles the
// play that just ended (when it counts as a listen) and then announces the new one as "now
// playing". A play is remembered in memory from its own change; the store's copy is read again
// when it ends, so a `kind` or listener count written meanwhile is seen. After a restart the
// play before the first message is the record before it in the store, if it began within the
// hour before (a longer gap is svc having been down, not a play).

/** One scrobbling service: ListenBrainz or Last.fm. */
export interface ScrobbleService {
  nowPlaying(play: Play, signal: AbortSignal): Promise<Delivery>;
  scrobble(play: Play, signal: AbortSignal): Promise<Delivery>;
}

/** The store's records, for the scrobblers; absent, the copy from each change is used and a restart forgets the play on air. */
export interface RecordLookup {
  /** The record as it is stored now (undefined: deleted). */
  byDbid(dbid: number): Promise<TrackData | undefined>;
  /** The record stored before `dbid` (history order) and when it arrived, ms since the epoch. */
  before(dbid: number): Promise<{ data: TrackData; receivedAtMs: number } | undefined>;
}

/** A record before the first message after a restart is the play it ended only if it began this recently. */
const RECOVERED_PLAY_MS = 60 * 60 * 1000;

export interface ScrobblerOptions {
  name: string;
  type: Extract<OutputType, 'listenbrainz' | 'lastfm'>;
  target: string;
  service: ScrobbleService;
  lookup?: RecordLookup;
  now?: () => number;
}

interface Remembered {
  play: Play | undefined;
  data: TrackData;
  /** Sent already (a retry of the next message must not scrobble it twice). */
  done: boolean;
  /** What became of the play before it, for the receipt. */
  note: string;
}

export function createScrobblerOutput(options: ScrobblerOptions): Output {
  const now = options.now ?? Date.now;
  let previous: Remembered | undefined;

  /** The verdict on the remembered play, now that `endedAtMs` ended it; sends it when it counts. */
  async function finishPrevious(endedAtMs: number, signal: AbortSignal): Promise<{ delivery?: Delivery; note: string }> {
    // The play that just ended; undefined after a restart (documented: that one play is not scrobbled).
    const ended = previous;
    if (!ended || ended.done) return { note: '' };
    const stored = options.lookup ? await options.lookup.byDbid(ended.data.dbid) : ended.data;
    const why = !stored ? 'deleted' : (neverScrobbled(stored) ?? (ended.play ? verdictWhy(ended.play, endedAtMs) : 'no artist or title'));
    if (why !== undefined || !ended.play) {
      ended.done = true;
      return { note: `${ended.data.dbid} not scrobbled: ${why ?? 'no artist or title'}` };
    }
    const delivery = await options.service.scrobble(ended.play, signal);
    if (delivery.outcome !== 'delivered') return { delivery, note: '' };
    ended.done = true;
    return { note: `scrobbled ${ended.data.dbid}${delivery.receipt ? ` (${delivery.receipt})` : ''}` };
  }

  /** The play that ended when `dbid` began, from the store (the first message after a start). */
  async function recovered(dbid: number, startedAtMs: number): Promise<Remembered | undefined> {
    const before = await options.lookup?.before(dbid);
    if (!before) return undefined;
    const play = playOf(before.data, before.receivedAtMs);
    if (!play || startedAtMs - play.startedAtMs > RECOVERED_PLAY_MS) return undefined;
    return { play, data: before.data, done: false, note: '' };
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
      previous ??= await recovered(data.dbid, play?.startedAtMs ?? message.createdAt);
      if (previous?.data.dbid !== data.dbid) {
        const finished = await finishPrevious(play?.startedAtMs ?? message.createdAt, signal);
        if (finished.delivery) return withContext(finished.delivery, `scrobble of ${previous?.data.dbid ?? '?'}`);
        previous = { play, data, done: false, note: finished.note };
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
      notes.push(previous.note);
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

/**
 * One request at a time with a gap between them, and a wait the service asked for (its rate
 * limit). A wait that would not fit in the attempt is answered as a retry at that time.
 */
export class RequestSpacing {
  private notBefore = 0;

  constructor(
    private readonly gapMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Waits for the turn; undefined when it came, else how long until it comes. */
  async turn(signal: AbortSignal, budgetMs = 5000): Promise<number | undefined> {
    const waitMs = this.notBefore - this.now();
    if (waitMs > budgetMs) return waitMs;
    if (waitMs > 0) await sleep(waitMs, signal).catch(() => undefined);
    if (signal.aborted) return this.gapMs;
    this.notBefore = this.now() + this.gapMs;
    return undefined;
  }

  /** An answer came: the gap counts from here, so calls arrive at least the gap apart. */
  answered(): void {
    this.notBefore = Math.max(this.notBefore, this.now() + this.gapMs);
  }

  /** The service said when its window opens again. */
  holdFor(ms: number): void {
    this.notBefore = Math.max(this.notBefore, this.now() + ms);
  }
}
