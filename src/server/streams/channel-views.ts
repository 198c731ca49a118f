import type { ChannelNowPlaying } from '../../domain/channel-now-playing';
import { NowPlaying } from '../../domain/current-track';
import type { ChannelRules } from '../../domain/channels';
import { AppError } from '../../errors';

// `?channel=` on the surfaces that show "now" (docs/channels.md "Now playing per channel"): the
// view a request, a stream or a page reads. Without it, a surface answers as before channels were
// declared (every channel's newest play), or, with channels declared, for the first channel.

/** A channel that has no play yet (and is not declared): answered as nothing playing. */
const NOTHING = new NowPlaying(null);

export interface ChannelViews {
  /** What a surface without `?channel=` shows. */
  readonly byDefault: NowPlaying;
  /**
   * The view for a `?channel=` value (absent or empty: byDefault). An undeclared channel, when
   * channels are declared, or a repeated parameter is a 400. `live`: the caller subscribes (a
   * stream), so a channel without a view yet gets one while there is room.
   */
  choose(given: string | readonly string[] | undefined | null, live?: boolean): NowPlaying;
}

export function channelViews(nowPlaying: ChannelNowPlaying, rules: ChannelRules): ChannelViews {
  const byDefault = rules.declared ? (nowPlaying.channel(rules.defaultChannel, true) ?? nowPlaying) : nowPlaying;
  return {
    byDefault,
    choose(given, live = false) {
      if (Array.isArray(given)) throw new AppError('INVALID_PARAMETERS', "Repeated query parameter 'channel'");
      if (typeof given !== 'string' || given === '') return byDefault;
      const choice = rules.resolve(given);
      if (choice.warning !== undefined) {
        throw new AppError(
          'INVALID_PARAMETERS',
          `Invalid 'channel': ${JSON.stringify(given.slice(0, 64))} is not a declared channel (${rules.names.join(', ')})`,
        );
      }
      return nowPlaying.channel(choice.channel, live || rules.declared) ?? NOTHING;
    },
  };
}

/** The `channel` query parameter of a raw request URL (an upgrade, a fast path), or undefined. */
export function channelParameter(url: string | undefined): string | string[] | undefined {
  const query = new URLSearchParams((url ?? '').split('?')[1] ?? '');
  const all = query.getAll('channel');
  return all.length === 0 ? undefined : all.length === 1 ? all[0] : all;
}

/** One surface per view, built on its first reader (a channel's streams and their subscriptions exist only once asked for). */
export class PerView<T> {
  private readonly built = new Map<NowPlaying, T>();

  constructor(private readonly build: (view: NowPlaying) => T) {}

  get(view: NowPlaying): T {
    let surface = this.built.get(view);
    if (surface === undefined) {
      surface = this.build(view);
      this.built.set(view, surface);
    }
    return surface;
  }

  all(): T[] {
    return [...this.built.values()];
  }
}
