import { fillEmptyFields } from '../domain/fill-empty-fields';
import type { TrackFields, TrackRecord } from '../domain/track';
import { errorMessage } from '../errors';
import type { Logger } from '../log';
import type { NowPlaying } from '../domain/current-track';
import type { TrackStore } from '../store/tracks';
import { fitRecord } from './fit-record';

// The one update path of a stored record (docs/title-first.md "How a track fills in"):
// enrichment, the cover and later images only fill fields the record has empty. Each text change
// is written to the row and announced, at most once per UPDATE_INTERVAL_MS per record; changes
// that come closer together are written and announced together. A change that brings an image
// (the cover) goes out at once (docs/decisions.md "Complete frames"), with any text waiting.

/** docs/decisions.md "Title first, details after": at most one announced update per 250 ms per record. */
const UPDATE_INTERVAL_MS = 250;

/** Time as the updates see it; tests pass a clock they move by hand (test/helpers/limiter-clock.ts). */
export interface UpdateClock {
  now(): number;
  /** Calls `fire` after about `ms` milliseconds; the returned function cancels it. */
  schedule(fire: () => void, ms: number): () => void;
}

const realClock: UpdateClock = {
  now: () => Date.now(),
  schedule(fire, ms) {
    const timer = setTimeout(fire, ms);
    return () => clearTimeout(timer);
  },
};

export interface RecordUpdateDeps {
  tracks: TrackStore;
  nowPlaying: NowPlaying;
  logger: Logger;
  /** `limits.maxRecordBytes`: what enrichment adds counts in the record's size bound too. */
  maxRecordBytes: number;
  /** The clock of the spacing (real by default; StartOptions.updateClock). */
  updateClock?: UpdateClock;
}

/** Our own cover URL is never cut: it names an image in the store. */
const UNCUT_FIELDS: ReadonlySet<string> = new Set(['coverurl']);

export class RecordUpdates {
  private record: TrackRecord;
  /** The metadata as last written (JSON): a fill that changes nothing is not announced. */
  private written: string;
  private lastWriteAt: number;
  /** Cancels the scheduled write; set while one waits. */
  private timer: (() => void) | undefined;
  private readonly clock: UpdateClock;
  private writing: Promise<void> = Promise.resolve();
  private stopped = false;
  /** The pending change brings an image: it is not held by the interval. */
  private urgent = false;

  constructor(
    stored: TrackRecord,
    private readonly deps: RecordUpdateDeps,
    private readonly intervalMs = UPDATE_INTERVAL_MS,
  ) {
    this.record = stored;
    this.written = JSON.stringify(stored.metadata);
    this.clock = deps.updateClock ?? realClock;
    // The bare record's announcement counts as the first.
    this.lastWriteAt = this.clock.now();
  }

  /** The record with every fill so far (written or about to be). */
  latest(): TrackRecord {
    return this.record;
  }

  /**
   * Fills the fields the record has empty. With `origin`, the filled fields are credited in
   * `enrichment_sources` (a provider, or per field); without it (a cover, a repeated submission) not.
   */
  fill(addition: Readonly<TrackFields>, origin?: { provider: string; fieldSources?: Readonly<Record<string, string>> }): void {
    if (this.stopped) return;
    const merged = fillEmptyFields({ fields: this.record.metadata, sources: {} }, addition, origin?.provider ?? '', origin?.fieldSources);
    const metadata = merged.fields;
    if (origin && Object.keys(merged.sources).length > 0) {
      const known = this.record.metadata.enrichment_sources;
      metadata.enrichment_sources = { ...(isSourceMap(known) ? known : {}), ...merged.sources };
    }
    this.replace(withinBound(metadata, this.record.metadata, this.deps.maxRecordBytes));
  }

  /**
   * A repeat of the same play (docs/title-first.md "The same track twice"): the fields it sends
   * that differ from the record replace them (a corrected album or label); a field it takes over
   * from enrichment is no longer credited to it. Fields it does not send stay.
   */
  correct(sent: Readonly<TrackFields>): void {
    if (this.stopped) return;
    const changed = Object.entries(sent).filter(
      ([key, value]) => key !== 'enrichment_sources' && JSON.stringify(this.record.metadata[key]) !== JSON.stringify(value),
    );
    if (changed.length === 0) return;
    const metadata: TrackFields = { ...this.record.metadata, ...Object.fromEntries(changed) };
    const known = metadata.enrichment_sources;
    if (isSourceMap(known)) {
      const sources = Object.fromEntries(Object.entries(known).filter(([key]) => !changed.some(([name]) => name === key)));
      if (Object.keys(sources).length > 0) metadata.enrichment_sources = sources;
      else delete metadata.enrichment_sources;
    }
    this.replace(withinBound(metadata, this.record.metadata, this.deps.maxRecordBytes));
  }

  private replace(metadata: TrackFields): void {
    if (metadata.coverurl !== undefined && metadata.coverurl !== this.record.metadata.coverurl) this.urgent = true;
    this.record = { ...this.record, metadata };
    this.schedule();
  }

  /** Resolves once every fill so far is written and announced (waiting out the interval). */
  async settled(): Promise<TrackRecord> {
    while (this.timer !== undefined || this.pendingWrite()) {
      await this.whenTimerFires();
      await this.writing;
    }
    return this.record;
  }

  /** The record was retracted: nothing more is written or announced. */
  stop(): void {
    this.stopped = true;
    this.timer?.();
    this.timer = undefined;
    this.timerFired?.();
  }

  private timerFired: (() => void) | undefined;

  private whenTimerFires(): Promise<void> {
    if (this.timer === undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.timerFired;
      this.timerFired = () => {
        previous?.();
        resolve();
      };
    });
  }

  private pendingWrite(): boolean {
    return !this.stopped && JSON.stringify(this.record.metadata) !== this.written;
  }

  private schedule(): void {
    if (!this.pendingWrite()) return;
    if (this.timer !== undefined) {
      // A text update waiting out the interval: an image that arrives takes it along at once.
      if (!this.urgent) return;
      this.timer();
    }
    const wait = this.urgent ? 0 : Math.max(0, this.lastWriteAt + this.intervalMs - this.clock.now());
    this.timer = this.clock.schedule(() => {
      this.timer = undefined;
      this.writing = this.writing.then(() => this.write());
      const fired = this.timerFired;
      this.timerFired = undefined;
      fired?.();
    }, wait);
  }

  private async write(): Promise<void> {
    if (!this.pendingWrite()) return;
    const record = this.record;
    // Tried once: a version the database refused is not tried again (the next fill writes it all).
    this.written = JSON.stringify(record.metadata);
    this.urgent = false;
    this.lastWriteAt = this.clock.now();
    try {
      await this.deps.tracks.updateMetadata(record.dbid, record.metadata);
    } catch (error) {
      // The bare record is stored and announced already: a database that fails now costs the details.
      this.deps.logger.warn(`track ${record.dbid}: enrichment not stored: ${errorMessage(error)}`);
      return;
    }
    if (this.stopped) return;
    // Ignored unless it is still the current track: an older record updates its own row only.
    this.deps.nowPlaying.update(record);
    // A fill that came while this one was written waits its turn.
    this.schedule();
  }
}

function isSourceMap(value: TrackFields[string] | undefined): value is Readonly<Record<string, string>> {
  return typeof value === 'object' && !Array.isArray(value);
}

/**
 * The filled record cut to the size bound. The response warns only about submitted fields
 * (docs/decisions.md "HTTP behaviour"), so an addition that does not fit is cut silently, and one
 * that cannot fit at all is left out.
 */
function withinBound(filled: TrackFields, before: TrackFields, maxBytes: number): TrackFields {
  try {
    return fitRecord(filled, maxBytes, [], UNCUT_FIELDS);
  } catch {
    return before;
  }
}

/**
 * The records this instance is still enriching, by dbid: a repeated submission of the same play
 * fills the same record through the same updates and answers once that enrichment has ended.
 */
export class RecordsInProgress {
  private readonly running = new Map<number, { updates: RecordUpdates; done: Promise<unknown> }>();

  /** Registers `updates` until `done` settles. */
  add(updates: RecordUpdates, done: Promise<unknown>): void {
    const { dbid } = updates.latest();
    const entry = { updates, done };
    this.running.set(dbid, entry);
    const forget = () => {
      if (this.running.get(dbid) === entry) this.running.delete(dbid);
    };
    done.then(forget, forget);
  }

  get(dbid: number): { updates: RecordUpdates; done: Promise<unknown> } | undefined {
    return this.running.get(dbid);
  }
}
