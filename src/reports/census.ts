import { countListeners, type SessionInterval } from '../domain/play';
import type { ListenerSession, ReportPlay } from './rows';

// Listener counts for plays the log has none for (docs/reports.md "Performances"), counted by the
// play log's own rule (countListeners, docs/play-log.md "Listeners per play"), so a listener
// connected through the end counts. The join streams: plays in air order, sessions in connection
// order, holding only the sessions still open at the current play.

interface Interval extends SessionInterval {
  startMs: number;
  /** undefined: still connected. */
  endMs: number | undefined;
}

function sessionInterval(session: ListenerSession): Interval {
  return {
    connectedAt: session.connected_at,
    disconnectedAt: session.disconnected_at,
    startMs: Date.parse(session.connected_at),
    endMs: session.disconnected_at === null ? undefined : Date.parse(session.disconnected_at),
  };
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
      window ??= new SessionWindow(openSessions()[Symbol.asyncIterator]());
      const startMs = Date.parse(play.started_at);
      const open = await window.advance(startMs, Date.parse(play.ended_at), play.channel);
      const listeners = countListeners({ startedAt: play.started_at, endedAt: play.ended_at }, open, options.minSessionSeconds, options.nowMs);
      yield { ...play, listeners };
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

  constructor(private readonly sessions: AsyncIterator<ListenerSession>) {}

  /** Reads sessions that connected before `endMs`, drops those that ended by `startMs`. */
  async advance(startMs: number, endMs: number, channel: string): Promise<Interval[]> {
    while (!this.done) {
      if (this.ahead === undefined) {
        const next = await this.sessions.next();
        if (next.done) {
          this.done = true;
          break;
        }
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

  async close(): Promise<void> {
    if (!this.done) await this.sessions.return?.();
  }
}
