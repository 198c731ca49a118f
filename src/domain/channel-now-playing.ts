import { NowPlaying, type NowPlayingOptions } from './current-track';
import { DEFAULT_CHANNEL } from './play';
import type { TrackRecord } from './track';

// One current play per channel (docs/channels.md "Now playing per channel"). Each channel's view
// is offered every record of its channel and reads the gaps below one from the channel's own
// records (dbids of one channel commit in order; two channels' do not, docs/channels.md "Order
// across channels"), so each view gets its channel's records once and in order, and every instance
// agrees on each channel's current play. The global NowPlaying shows the newest of all. A view is
// a NowPlaying of its own: every surface built on one (the /v1/last answers, the streams, the
// outputs) works unchanged on a channel's.

/** At most this many channel views; a further channel is shown only on the surfaces for all channels. */
export const MAX_CHANNEL_VIEWS = 256;

export interface ChannelNowPlayingOptions extends NowPlayingOptions {
  /** The channel's stored records between two dbids (RecordsBetween, on one channel): a view's gap filler. */
  betweenOn?: (channel: string, after: number, before: number) => Promise<TrackRecord[]>;
  /** The channel's newest record left, once its current one is deleted. */
  currentOn?: (channel: string) => Promise<TrackRecord | null>;
  onReadError?: (error: unknown) => void;
}

export function channelOf(record: TrackRecord): string {
  return record.play?.channel ?? DEFAULT_CHANNEL;
}

export class ChannelNowPlaying extends NowPlaying {
  private readonly views = new Map<string, NowPlaying>();

  constructor(
    initial: TrackRecord | null,
    /** Each channel's current record at start (the store's one current play per channel). */
    channels: readonly TrackRecord[],
    private readonly channelOptions: ChannelNowPlayingOptions = {},
  ) {
    super(initial, channelOptions);
    for (const record of channels) this.view(channelOf(record), record);
    if (initial) this.view(channelOf(initial), initial);
    // Subscribed first: a channel's view is current before any stream hears the global change.
    this.on('track-changed', (record) => {
      const view = this.view(channelOf(record));
      // A record shown again (the one current again after a retraction) is already its channel's.
      if (view && view.current()?.dbid !== record.dbid) view.offer(record);
    });
  }

  /** Offered to the global view and to the record's channel's, each in its own order (a channel's view may take a record the global one has passed). */
  override offer(record: TrackRecord): boolean {
    // Without a channel's own gap reads, the views are fed from the global sequence alone.
    if (!this.channelOptions.betweenOn) return super.offer(record);
    // The view first: it is current before any stream hears the global change.
    const view = this.view(channelOf(record));
    const current = view?.current();
    if (current?.dbid !== record.dbid) view?.offer(record);
    else if (JSON.stringify(current.metadata) !== JSON.stringify(record.metadata)) view?.update(record);
    return super.offer(record);
  }

  /** The work of both (an output bound to the channel registers on its view): the answer waits for all of it. */
  override async settle(record: TrackRecord): Promise<void> {
    const view = this.views.get(channelOf(record));
    // A record the view still holds (the gap below it being read) is on it before the answer.
    await view?.shown();
    await Promise.all([super.settle(record), view?.settle(record)]);
  }

  /** The channel's view; created on its first record (or, with `create`, for a declared channel). */
  channel(name: string, create = false): NowPlaying | undefined {
    return this.views.get(name) ?? (create ? this.view(name) : undefined);
  }

  /** The channel's current record (null: nothing on it yet). */
  currentOn(name: string): TrackRecord | null {
    return this.views.get(name)?.current() ?? null;
  }

  /** The channel a view shows (undefined: this is no channel's view, the global one for instance). */
  nameOf(view: NowPlaying): string | undefined {
    for (const [name, candidate] of this.views) if (candidate === view) return name;
    return undefined;
  }

  /** The channels with a view, in the order they were first seen. */
  channelNames(): string[] {
    return [...this.views.keys()];
  }

  override update(record: TrackRecord): void {
    super.update(record);
    this.views.get(channelOf(record))?.update(record);
  }

  override deleted(dbid: number): void {
    super.deleted(dbid);
    for (const [name, view] of this.views) {
      view.deleted(dbid);
      if (view.current()?.dbid === dbid) this.retractFromStore(name, view, dbid);
    }
  }

  /** The channel's newest record left becomes its current one (read from the store). */
  private retractFromStore(name: string, view: NowPlaying, dbid: number): void {
    const read = this.channelOptions.currentOn;
    if (!read) {
      view.retract(dbid, null);
      return;
    }
    read(name).then(
      // A 408's row may still be stored: it is not what is current again.
      (previous) => view.retract(dbid, previous?.dbid === dbid ? null : previous),
      (error: unknown) => {
        this.channelOptions.onReadError?.(error);
        view.retract(dbid, null);
      },
    );
  }

  override retract(dbid: number, previous: TrackRecord | null): boolean {
    // A 408's take-back (and a deletion on another instance) of a channel's current record.
    for (const [name, view] of this.views) {
      if (view.current()?.dbid !== dbid) continue;
      if (previous && channelOf(previous) === name) view.retract(dbid, previous);
      else this.retractFromStore(name, view, dbid);
    }
    return super.retract(dbid, previous);
  }

  private view(name: string, initial: TrackRecord | null = null): NowPlaying | undefined {
    const existing = this.views.get(name);
    if (existing) return existing;
    if (this.views.size >= MAX_CHANNEL_VIEWS) return undefined;
    const betweenOn = this.channelOptions.betweenOn;
    const view = new NowPlaying(
      initial,
      betweenOn ? { between: (after, before) => betweenOn(name, after, before), onGapError: this.channelOptions.onGapError } : {},
    );
    this.views.set(name, view);
    return view;
  }
}
