import type { ListenerSession, PlayListeners, ReportPlay } from './rows';

// Listener counts per play from listener sessions (docs/reports.md "Performances"): a session
// counts for a play when it overlaps it, `connected_at < ended_at` and it is either still
// connected or disconnected after `started_at`, so a listener connected through the end counts.
// The join streams: plays in air order, sessions in connection order, holding only the sessions
// still open at the current play.

interface Interval {
  startMs: number;
  /** undefined: still connected. */
  endMs: number | undefined;
}

function sessionInterval(session: ListenerSession): Interval {
  return {
    startMs: Date.parse(session.connected_at),
    endMs: session.disconnected_at === null ? undefined : Date.parse(session.disconnected_at),
  };
}

/** The counts of one play from the sessions of its channel (any order; those not overlapping are ignored). */
export function countListeners(playStartMs: number, playEndMs: number, sessions: Iterable<Interval>): PlayListeners {
  const edges: Array<[number, number]> = [];
  let atp = 0;
  let listenerMs = 0;
  for (const session of sessions) {
    const overlaps = session.startMs < playEndMs && (session.endMs === undefined || session.endMs > playStartMs);
    if (!overlaps) continue;
    const from = Math.max(session.startMs, playStartMs);
    const to = Math.min(session.endMs ?? playEndMs, playEndMs);
    atp++;
    listenerMs += to - from;
    edges.push([from, 1], [to, -1]);
  }
  // A listener who leaves at the instant another joins is not two at once: ends sort first.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, step] of edges) {
    now += step;
    peak = Math.max(peak, now);
  }
  return { atp, listener_seconds: Math.round(listenerMs) / 1000, peak };
}

export interface ListenerJoinOptions {
  /** playlog.minSessionSeconds: shorter sessions are left out (open ones count until `nowMs`). */
  minSessionSeconds: number;
  nowMs: number;
}

/**
 * Each play with `listeners` filled: a kept count stays; a missing one is counted from the
 * sessions. Sessions are read only once a play needs them.
 */
export async function* withListeners(
  plays: AsyncIterable<ReportPlay>,
  openSessions: () => AsyncIterable<ListenerSession>,
  options: ListenerJoinOptions,
): AsyncGenerator<ReportPlay> {
  let window: SessionWindow | undefined;
  try {
    for await (const play of plays) {
      if (play.listeners !== null || play.ended_at === null) {
        yield play;
        continue;
      }
      window ??= new SessionWindow(openSessions()[Symbol.asyncIterator](), options);
      const startMs = Date.parse(play.started_at);
      const endMs = Date.parse(play.ended_at);
      const open = await window.advance(startMs, endMs, play.channel);
      yield { ...play, listeners: countListeners(startMs, endMs, open) };
    }
  } finally {
    await window?.close();
  }
}

/** The sessions that may still overlap a play, per channel. */
class SessionWindow {
  private readonly open = new Map<string, Interval[]>();
  private ahead: { channel: string; interval: Interval } | undefined;
  private done = false;

  constructor(
    private readonly sessions: AsyncIterator<ListenerSession>,
    private readonly options: ListenerJoinOptions,
  ) {}

  /** Reads sessions that connected before `endMs`, drops those that ended by `startMs`. */
  async advance(startMs: number, endMs: number, channel: string): Promise<Interval[]> {
    while (!this.done) {
      if (this.ahead === undefined) {
        const next = await this.sessions.next();
        if (next.done) {
          this.done = true;
          break;
        }
        if (this.tooShort(next.value)) continue;
        this.ahead = { channel: next.value.channel, interval: sessionInterval(next.value) };
      }
      if (this.ahead.interval.startMs >= endMs) break;
      const list = this.open.get(this.ahead.channel) ?? [];
      list.push(this.ahead.interval);
      this.open.set(this.ahead.channel, list);
      this.ahead = undefined;
    }
    for (const [name, list] of this.open) {
      // Plays come in start order: a session over by this start overlaps no later play.
      this.open.set(
        name,
        list.filter((interval) => interval.endMs === undefined || interval.endMs > startMs),
      );
    }
    return this.open.get(channel) ?? [];
  }

  private tooShort(session: ListenerSession): boolean {
    if (this.options.minSessionSeconds <= 0) return false;
    const interval = sessionInterval(session);
    return ((interval.endMs ?? this.options.nowMs) - interval.startMs) / 1000 < this.options.minSessionSeconds;
  }

  async close(): Promise<void> {
    if (!this.done) await this.sessions.return?.();
  }
}
