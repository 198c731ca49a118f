import { withListeners } from '../../../src/reports/census';
import { countListeners } from '../../../src/domain/play';
import type { ListenerSession, ReportPlay } from '../../../src/reports/rows';
import { PLAYS, SESSIONS } from '../../fixtures/reports/play-log';

const at = (time: string) => Date.parse(`2026-10-01T${time}.000Z`);
const iso = (time: string) => `2026-10-01T${time}.000Z`;
const interval = (from: string, to: string | null) => ({ connectedAt: iso(from), disconnectedAt: to === null ? null : iso(to) });
const play = { startedAt: iso('10:00:00'), endedAt: iso('10:04:00') };

/** Batches of three rows. */
async function* iterate<T>(items: readonly T[]): AsyncGenerator<readonly T[]> {
  for (let i = 0; i < items.length; i += 3) yield items.slice(i, i + 3);
}

async function collect<T>(batches: AsyncIterable<readonly T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const batch of batches) out.push(...batch);
  return out;
}

describe('listener counts per play (census)', () => {
  // The play 10:00:00-10:04:00, counted by hand:
  //   before:  09:50-10:02  overlaps 120 s      counted
  //   after:   10:01-10:10  overlaps 180 s      counted
  //   through: 09:00-(open) overlaps 240 s      counted (connected through the end)
  //   inside:  10:01-10:02  overlaps  60 s      counted
  //   joins at the end 10:04-10:20              not counted
  //   leaves at the start 09:30-10:00           not counted
  //   at 10:01-10:02 four listen at once: peak 4
  const sessions = [
    interval('09:50:00', '10:02:00'),
    interval('10:01:00', '10:10:00'),
    interval('09:00:00', null),
    interval('10:01:00', '10:02:00'),
    interval('10:04:00', '10:20:00'),
    interval('09:30:00', '10:00:00'),
  ];

  it('When sessions start before, end after, span the play and stay connected, then the counts match the hand count', () => {
    expect(countListeners(play, sessions, 0, at('12:00:00'))).toEqual({ atp: 4, listener_seconds: 600, peak: 4 });
  });

  it('When one listener leaves at the instant another joins, then the peak is one, not two', () => {
    const handover = [interval('09:00:00', '10:02:00'), interval('10:02:00', '11:00:00')];
    expect(countListeners(play, handover, 0, at('12:00:00'))).toEqual({ atp: 2, listener_seconds: 240, peak: 1 });
  });

  it('When a play has no kept count, then the streaming join counts it from the sessions of its channel, and kept counts stay', async () => {
    const otherChannel: ListenerSession = { ...SESSIONS[0], id: 99, channel: 'jazz' };
    const plays = await collect(
      withListeners(iterate(PLAYS), () => iterate([...SESSIONS, otherChannel].sort((a, b) => a.connected_at.localeCompare(b.connected_at))), {
        minSessionSeconds: 0,
        nowMs: at('23:59:00'),
      }),
    );
    const byDbid = new Map(plays.map((play) => [play.dbid, play]));
    // dbid 105 is 23:00-23:04; SESSIONS says by hand: 4 listeners, 600 s, at most 4 at once.
    expect(byDbid.get(105)?.listeners).toEqual({ atp: 4, listener_seconds: 600, peak: 4 });
    expect(byDbid.get(101)?.listeners).toEqual(PLAYS[0].listeners);
  });

  it('When sessions are shorter than minSessionSeconds, then they are left out', async () => {
    const plays = await collect(
      withListeners(iterate(PLAYS.filter((p) => p.dbid === 105)), () => iterate(SESSIONS), { minSessionSeconds: 120, nowMs: at('23:59:00') }),
    );
    // Session 6 lasted 60 s.
    expect(plays[0].listeners).toEqual({ atp: 3, listener_seconds: 540, peak: 3 });
  });

  it('When every play has a kept count, then the sessions are never read', async () => {
    const kept: ReportPlay[] = PLAYS.filter((play) => play.listeners !== null);
    let opened = false;
    await collect(
      withListeners(
        iterate(kept),
        () => {
          opened = true;
          return iterate(SESSIONS);
        },
        { minSessionSeconds: 0, nowMs: 0 },
      ),
    );
    expect(opened).toBe(false);
  });
});
