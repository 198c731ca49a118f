import { countListeners, listenerOf, type SessionInterval } from '../domain/play';
import type { Batches } from './format';
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
    listener: listenerOf(session.address_hash, session.user_agent ?? ''),
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
  plays: Batches<ReportPlay>,
  openSessions: () => Batches<ListenerSession>,
  options: ListenerJoinOptions,
): Batches<ReportPlay> {
  let window: SessionWindow | undefined;
  try {
    for await (const batch of plays) {
      if (batch.every((play) => play.listeners !== null || play.ended_at === null)) {
        yield batch;
        continue;
      }
      const filled: ReportPlay[] = [];
      for (const play of batch) {
        if (play.listeners !== null || play.ended_at === null) {
          filled.push(play);
          continue;
        }
        window ??= new SessionWindow(openSessions()[Symbol.asyncIterator]());
        const open = await window.advance(Date.parse(play.started_at), Date.parse(play.ended_at), play.channel);
        const listeners = countListeners({ startedAt: play.started_at, endedAt: play.ended_at }, open, options.minSessionSeconds, options.nowMs);
        filled.push({ ...play, listeners });
      }
      yield filled;
    }
  } finally {
    await window?.close();
  }
}

/** The sessions that may still overlap a play, per channel. */
class SessionWindow {
  private readonly open = new Map<string, Interval[]>();
  private batch: readonly ListenerSession[] = [];
  private next = 0;
  private done = false;

  constructor(private readonly sessions: AsyncIterator<readonly ListenerSession[]>) {}

  /** The next session not yet taken, reading a batch when the last is used up; undefined at the end. */
  private async peek(): Promise<ListenerSession | undefined> {
    while (this.next >= this.batch.length) {
      if (this.done) return undefined;
      const read = await this.sessions.next();
      if (read.done) {
        this.done = true;
        return undefined;
      }
      this.batch = read.value;
      this.next = 0;
    }
    return this.batch[this.next];
  }

  /** Takes sessions that connected before `endMs`, drops those that ended by `startMs`. */
  async advance(startMs: number, endMs: number, channel: string): Promise<Interval[]> {
    for (let session = await this.peek(); session !== undefined; session = await this.peek()) {
      const interval = sessionInterval(session);
      if (interval.startMs >= endMs) break;
      const list = this.open.get(session.channel) ?? [];
      list.push(interval);
      this.open.set(session.channel, list);
      this.next++;
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
