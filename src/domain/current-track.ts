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

export class NowPlaying extends EventEmitter<NowPlayingEvents> {
  private snapshotValue: NowPlayingSnapshot;

  constructor(initial: TrackRecord | null) {
    super();
    // Every WebSocket viewer subscribes; the default limit of 10 would warn for no reason.
    this.setMaxListeners(0);
    this.snapshotValue = serialize(initial);
  }

  snapshot(): NowPlayingSnapshot {
    return this.snapshotValue;
  }

  current(): TrackRecord | null {
    return this.snapshotValue.record;
  }

  /** Makes `record` current unless a record with a higher dbid already is. */
  offer(record: TrackRecord): boolean {
    const current = this.snapshotValue.record;
    if (current && current.dbid > record.dbid) return false;
    this.snapshotValue = serialize(record);
    this.emit('track-changed', record);
    return true;
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
