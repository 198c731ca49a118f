import { EventEmitter } from 'node:events';
import type { TrackRecord } from './track';
import { etagOf } from './etag';
import { recordJson } from './play';

// The current track (docs/decisions.md "Delivery promises": the stored record with the highest
// dbid, whatever order the bodies arrived in) and the
// in-process "track changed" event. /v1/last is served from a copy serialized once per change.

export interface NowPlayingSnapshot {
  record: TrackRecord | null;
  /** The /v1/last body: `{}` or `{dbid, ...processed metadata}`. */
  body: string;
  etag: string;
}

interface NowPlayingEvents {
  /** A newer track became current. */
  'track-changed': [TrackRecord];
  /** The current track's metadata changed (enrichment filled fields, its cover arrived). */
  'track-updated': [TrackRecord];
  /**
   * A record's enrichment has ended (done or its deadline passed), with the final record, current
   * or not. Local only: each instance hears its own submissions (outputs send after enrichment).
   */
  'track-settled': [TrackRecord];
  /** A record was deleted (current or not). */
  'track-deleted': [number];
  /** The current record `dbid` was deleted; the second is current again (null: nothing is). */
  'track-retracted': [number, TrackRecord | null];
}

/**
 * The stored records with a dbid between `after` and `before` (both excluded), oldest first, at
 * most a bounded number. Asked once `before` is stored: every lower dbid is then stored or never
 * will be (dbids commit in order, docs/decisions.md "Delivery promises").
 */
export type RecordsBetween = (after: number, before: number) => Promise<TrackRecord[]>;

export interface NowPlayingOptions {
  /** Fills a gap before a newer record is shown; without it a record is shown as it is offered. */
  between?: RecordsBetween;
  /** A gap that could not be read: the held records are shown without it. */
  onGapError?: (error: unknown) => void;
}

export class NowPlaying extends EventEmitter<NowPlayingEvents> {
  private snapshotValue: NowPlayingSnapshot;
  /** The highest dbid shown, or known absent below one shown: a record above it + 1 leaves a gap. */
  private newest: number;
  /** Offered records waiting for the gap below them to be read, by dbid. */
  private readonly held = new Map<number, TrackRecord>();
  private filling = false;
  /** The running gap fill (null: none). */
  private fillRun: Promise<void> | null = null;

  constructor(
    initial: TrackRecord | null,
    private readonly options: NowPlayingOptions = {},
  ) {
    super();
    // Every WebSocket viewer subscribes; the default limit of 10 would warn for no reason.
    this.setMaxListeners(0);
    this.snapshotValue = serialize(initial);
    this.newest = initial?.dbid ?? 0;
  }

  snapshot(): NowPlayingSnapshot {
    return this.snapshotValue;
  }

  current(): TrackRecord | null {
    return this.snapshotValue.record;
  }

  /**
   * Makes `record` current unless a record with a higher dbid already is. Every live reader gets
   * every dbid once, in order, whatever order they are offered in (an instance's own write before
   * another instance's older one reached it): a record above a gap waits until the records in the
   * gap are read from the store and shown before it (docs/several-instances.md "Resuming streams").
   */
  offer(record: TrackRecord): boolean {
    const current = this.snapshotValue.record;
    if (current && current.dbid > record.dbid) return false;
    if (this.options.between && (this.filling || record.dbid > this.newest + 1) && record.dbid > this.newest) {
      this.held.set(record.dbid, record);
      if (!this.filling) this.fillRun = this.fillGaps();
      return true;
    }
    this.show(record);
    return true;
  }

  /** Resolves once the records offered so far are shown (the gaps below them read). */
  async shown(): Promise<void> {
    while (this.fillRun) await this.fillRun.catch(() => undefined);
  }

  private show(record: TrackRecord): void {
    const current = this.snapshotValue.record;
    if (current && current.dbid > record.dbid) return;
    this.newest = Math.max(this.newest, record.dbid);
    this.snapshotValue = serialize(record);
    this.emit('track-changed', record);
  }

  /** Reads the gap below the newest held record, then shows what it found and what was held, in dbid order. */
  private async fillGaps(): Promise<void> {
    const between = this.options.between;
    if (this.filling || !between) return;
    this.filling = true;
    try {
      while (this.held.size > 0) {
        const target = Math.max(...this.held.keys());
        const found = new Map<number, TrackRecord>();
        if (target > this.newest + 1) {
          try {
            for (const record of await between(this.newest, target)) if (record.dbid > this.newest && record.dbid < target) found.set(record.dbid, record);
          } catch (error) {
            this.options.onGapError?.(error);
          }
        }
        // The copies offered here are the newer ones (their updates reached them).
        for (const [dbid, record] of this.held) {
          if (dbid > target) continue;
          found.set(dbid, record);
          this.held.delete(dbid);
        }
        for (const record of [...found.values()].sort((a, b) => a.dbid - b.dbid)) this.show(record);
        this.newest = Math.max(this.newest, target);
      }
    } finally {
      this.filling = false;
      this.fillRun = null;
    }
  }

  /**
   * The record `dbid` was deleted. If it was current, `previous` (the newest record left, or
   * null) becomes current and a normal 'track-changed' tells every stream (docs/http-api.md).
   */
  retract(dbid: number, previous: TrackRecord | null): boolean {
    if (this.snapshotValue.record?.dbid !== dbid) return false;
    this.snapshotValue = serialize(previous);
    if (previous) this.emit('track-changed', previous);
    this.emit('track-retracted', dbid, previous);
    return true;
  }

  /** The record `dbid` is gone; call retract() too when it was current. */
  deleted(dbid: number): void {
    this.emit('track-deleted', dbid);
  }

  /** Refreshes the copy when a stored record changed; ignored unless it is the current one. */
  update(record: TrackRecord): void {
    if (this.held.has(record.dbid)) this.held.set(record.dbid, record);
    const shown = this.snapshotValue.record;
    if (shown?.dbid !== record.dbid) return;
    // A play's end never goes back: an enrichment update made from an older copy keeps the end shown.
    const updated = shown.play?.endedAt && record.play && !record.play.endedAt ? { ...record, play: shown.play } : record;
    this.snapshotValue = serialize(updated);
    this.emit('track-updated', updated);
  }

  private readonly settleWork = new Set<(record: TrackRecord) => Promise<void>>();

  /**
   * Work that must be done before a submission is answered, once its enrichment has ended: the
   * outputs put their messages in the store, so an acknowledged track is never a lost message and
   * messages are queued in the order the answers went out. Answers the function that unregisters.
   */
  onSettled(work: (record: TrackRecord) => Promise<void>): () => void {
    this.settleWork.add(work);
    return () => this.settleWork.delete(work);
  }

  /** Tells local listeners that `record`'s enrichment has ended, and waits for the work registered with onSettled. */
  async settle(record: TrackRecord): Promise<void> {
    this.emit('track-settled', record);
    await Promise.all([...this.settleWork].map((work) => work(record)));
  }
}

function serialize(record: TrackRecord | null): NowPlayingSnapshot {
  const body = record ? JSON.stringify(recordJson(record)) : '{}';
  return { record, body, etag: etagOf(body) };
}
