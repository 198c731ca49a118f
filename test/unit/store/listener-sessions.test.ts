import path from 'node:path';
import Database from 'better-sqlite3';
import { countListeners, listenerOf, type SessionInterval } from '../../../src/domain/play';
import { openStore } from '../../../src/store/open-store';
import type { Store } from '../../../src/store/store';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { makeTempDir } from '../../helpers/temp-dir';

// The listener-session half of the play log's store (src/store/plays.ts), on both backends: a
// play's listeners counted by one SQL aggregate agree with countListeners (domain/play.ts) on
// a seeded month of sessions with reconnects; the open-session cap per mount; replays; the
// bounded lifetime; an Icecast restart; a mount's live stretches (docs/play-log.md
// "Sessions that must be plausible"); the open totals the database keeps (SQLite migration 18,
// PostgreSQL 15) equal the open sessions after adds, removes, replays, an Icecast restart, the
// bounded lifetime and a reopened store, and a play's count read from them agrees with
// countListeners while many sessions stay open across it.

const SERVER = 'http://127.0.0.1:8000';
const MOUNT = '/live.mp3';
const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, 0) + seconds * 1000).toISOString();
const key = (clientId: string) => ({ server: SERVER, mount: MOUNT, clientId });

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** Reads rows of the store's database directly (the open totals are not part of the store's interface). */
type Rows = (sql: string) => Promise<Record<string, unknown>[]>;

/** The open totals as kept, and as counted again from the sessions themselves. */
async function openTotals(rows: Rows): Promise<{ kept: unknown; counted: unknown }> {
  const text = (list: Record<string, unknown>[]) => list.map((row) => Object.values(row).map(String).join(' ')).sort();
  const kept = {
    mounts: text(await rows('SELECT server, mount, sessions FROM listener_open_mounts WHERE sessions <> 0')),
    listeners: text(await rows('SELECT channel, address, user_agent, sessions, earliest_open FROM listener_open_listeners')),
    channels: text(await rows('SELECT channel, sessions, listeners FROM listener_open_channels WHERE sessions <> 0 OR listeners <> 0')),
  };
  const open = 'FROM listener_sessions WHERE disconnected_at IS NULL';
  const counted = {
    mounts: text(await rows(`SELECT server, mount, count(*) AS sessions ${open} GROUP BY server, mount`)),
    listeners: text(
      await rows(`SELECT channel, address, user_agent, count(*) AS sessions, min(connected_at) AS earliest_open ${open} GROUP BY channel, address, user_agent`),
    ),
    channels: text(await rows(`SELECT channel, count(*) AS sessions, count(DISTINCT address || ' ' || user_agent) AS listeners ${open} GROUP BY channel`)),
  };
  return { kept, counted };
}

function sessionContract(openFresh: () => Promise<Store>, rows: Rows, reopen: () => Promise<Store>): void {
  let store: Store;
  beforeEach(async () => {
    store = await openFresh();
  });
  afterEach(() => store.close());
  const open = (clientId: string, second: number, address = `a${clientId}`, maxOpen = 10_000) =>
    store.plays.openSession({ ...key(clientId), channel: 'main', source: 'auth', address, userAgent: 'player', connectedAt: at(second) }, maxOpen);

  it('When sessions (reconnects among them) overlap plays, then the SQL count equals countListeners for every play', async () => {
    const random = seeded(54);
    const intervals: SessionInterval[] = [];
    for (let i = 0; i < 300; i += 1) {
      const from = Math.floor(random() * 3000);
      // 30 listeners, so most reconnect; a tenth still connected; lengths from 0 to 10 minutes.
      const address = `listener-${Math.floor(random() * 30)}`;
      const to = random() < 0.1 ? null : from + Math.floor(random() * 600);
      expect(await open(String(i), from, address)).toBe('opened');
      if (to !== null) await store.plays.closeSession(key(String(i)), at(to));
      intervals.push({ connectedAt: at(from), disconnectedAt: to === null ? null : at(to), listener: listenerOf(address, 'player') });
    }
    const now = 4000;
    for (const minSessionSeconds of [0, 60]) {
      for (let start = 0; start < 3600; start += 180) {
        const play = { startedAt: at(start), endedAt: at(start + 180) };
        const counted = await store.plays.countListeners('main', play.startedAt, play.endedAt, { minSessionSeconds, now: at(now) });
        expect([start, minSessionSeconds, counted]).toEqual([
          start,
          minSessionSeconds,
          countListeners(play, intervals, minSessionSeconds, Date.parse(at(now))),
        ]);
      }
    }
  });

  it('When one listener reconnects inside a play, then the play has one performance (atp 1), their seconds summed', async () => {
    await open('1', 10, 'same');
    await store.plays.closeSession(key('1'), at(40));
    await open('2', 50, 'same');
    await store.plays.closeSession(key('2'), at(90));
    await open('3', 60, 'other');
    await store.plays.closeSession(key('3'), at(70));
    expect(await store.plays.countListeners('main', at(0), at(100), { minSessionSeconds: 0, now: at(100) })).toEqual({ atp: 2, listener_seconds: 80, peak: 2 });
  });

  it('When a mount is at its cap of open sessions, then the next listener is refused until one leaves', async () => {
    expect(await open('1', 0, 'a', 2)).toBe('opened');
    expect(await open('1', 1, 'a', 2)).toBe('already-open');
    expect(await open('2', 2, 'b', 2)).toBe('opened');
    expect(await open('3', 3, 'c', 2)).toBe('full');
    await store.plays.closeSession(key('1'), at(4));
    expect(await open('3', 5, 'c', 2)).toBe('opened');
    expect((await store.plays.openSessions(SERVER, MOUNT)).map((session) => session.clientId)).toEqual(['2', '3']);
  });

  it('When a session under a key ended, then endedSince finds it from any claimed start before its end', async () => {
    await open('7', 100);
    expect(await store.plays.endedSince(key('7'), at(0))).toBe(false);
    await store.plays.closeSession(key('7'), at(200));
    expect(await store.plays.endedSince(key('7'), at(150))).toBe(true);
    expect(await store.plays.endedSince(key('7'), at(201))).toBe(false);
    expect(await store.plays.endedSince(key('8'), at(0))).toBe(false);
  });

  it('When sessions stay open past the bounded lifetime, then closeOverdue closes them at that length and leaves the young ones', async () => {
    await open('1', 0);
    await open('2', 500);
    expect(await store.plays.closeOverdue(at(1000), 600_000)).toBe(1);
    expect((await store.plays.openSessions(SERVER, MOUNT)).map((session) => session.clientId)).toEqual(['2']);
    expect(await store.plays.countListeners('main', at(0), at(1000), { minSessionSeconds: 0, now: at(1000) })).toMatchObject({ listener_seconds: 600 + 500 });
  });

  it('When a lower client id joins a mount than its open sessions, then those of the earlier run are closed (other mounts kept)', async () => {
    await open('20', 0);
    await open('21', 1);
    await store.plays.openSession(
      { server: SERVER, mount: '/other.mp3', clientId: '22', channel: 'main', source: 'auth', address: 'x', userAgent: 'p', connectedAt: at(2) },
      10,
    );
    expect(await store.plays.closeEarlierRun(SERVER, MOUNT, '21', at(50))).toBe(0);
    expect(await store.plays.closeEarlierRun(SERVER, MOUNT, '3', at(60))).toBe(2);
    expect(await store.plays.openSessions(SERVER, MOUNT)).toEqual([]);
    expect(await store.plays.openSessions(SERVER, '/other.mp3')).toHaveLength(1);
  });

  it('When sessions open, close, replay, outlive their bound and an Icecast restarts, then the open totals equal the open sessions, and stay so after a reopen', async () => {
    const expectTotalsRight = async () => {
      const { kept, counted } = await openTotals(rows);
      expect(kept).toEqual(counted);
    };
    // Two listeners with several sessions each (a reconnect, two players at one address), one alone.
    await open('1', 0, 'same');
    await open('2', 10, 'same');
    await open('3', 20, 'other');
    await open('1', 30, 'same'); // a replayed add: already open
    await open('4', 500, 'same');
    await expectTotalsRight();
    expect(await store.plays.closeSession(key('1'), at(40))).toBe(true); // the listener's earliest session goes
    expect(await store.plays.closeSession(key('1'), at(41))).toBe(false); // a replayed remove
    await expectTotalsRight();
    expect(await store.plays.closeOverdue(at(700), 600_000)).toBe(2); // '2' and '3' past the bound, '4' young
    await expectTotalsRight();
    await open('30', 710, 'late');
    expect(await store.plays.closeEarlierRun(SERVER, MOUNT, '5', at(720))).toBe(1); // Icecast restarted: '30' was of its earlier run
    await expectTotalsRight();
    await store.close();
    store = await reopen();
    await open('5', 730, 'after');
    await expectTotalsRight();
    expect((await store.plays.openSessions(SERVER, MOUNT)).map((session) => session.clientId)).toEqual(['4', '5']);
  });

  it('When many sessions stay open across plays (a listener with several), then each count from the open totals equals countListeners', async () => {
    const random = seeded(18);
    const intervals: SessionInterval[] = [];
    for (let i = 0; i < 200; i += 1) {
      // 40 listeners, half their sessions open at the end; some connect inside the plays.
      const from = Math.floor(random() * 2000);
      const address = `listener-${Math.floor(random() * 40)}`;
      const to = random() < 0.5 ? null : from + Math.floor(random() * 900);
      expect(await open(String(i), from, address)).toBe('opened');
      if (to !== null) await store.plays.closeSession(key(String(i)), at(to));
      intervals.push({ connectedAt: at(from), disconnectedAt: to === null ? null : at(to), listener: listenerOf(address, 'player') });
    }
    for (const [minSessionSeconds, now] of [
      [0, 2100],
      [120, 2100],
      [1500, 2100],
    ]) {
      // Plays of 3 minutes, and of 5 seconds (shorter than the minimum: the cut is before now - minimum).
      for (const [start, length] of [
        [1000, 180],
        [1800, 180],
        [1900, 5],
        [2050, 0],
      ]) {
        const play = { startedAt: at(start), endedAt: at(start + length) };
        const counted = await store.plays.countListeners('main', play.startedAt, play.endedAt, { minSessionSeconds, now: at(now) });
        expect([start, length, minSessionSeconds, counted]).toEqual([
          start,
          length,
          minSessionSeconds,
          countListeners(play, intervals, minSessionSeconds, Date.parse(at(now))),
        ]);
      }
    }
  });

  it('When a mount is seen live, ends, and is seen live again, then each stretch starts where the evidence says, never before the end', async () => {
    expect(await store.plays.mountLive(SERVER, MOUNT)).toBeUndefined();
    await store.plays.markLive(SERVER, MOUNT, at(100));
    await store.plays.markLive(SERVER, MOUNT, at(50)); // a poll lists a listener connected since 50
    await store.plays.markLive(SERVER, MOUNT, at(200));
    expect(await store.plays.mountLive(SERVER, MOUNT)).toEqual({ liveSince: at(50), endedAt: null });
    await store.plays.markEnded(SERVER, MOUNT, at(300));
    await store.plays.markEnded(SERVER, MOUNT, at(400)); // the first end stands
    expect(await store.plays.mountLive(SERVER, MOUNT)).toEqual({ liveSince: at(50), endedAt: at(300) });
    await store.plays.markLive(SERVER, MOUNT, at(250));
    expect(await store.plays.mountLive(SERVER, MOUNT)).toEqual({ liveSince: at(300), endedAt: null });
  });
}

describe('listener sessions store: SQLite', () => {
  const temp = makeTempDir();
  afterAll(() => temp.cleanup());
  let n = 0;
  const file = () => path.join(temp.dir, `sessions-${n}.db`);
  const rows: Rows = async (sql) => {
    const db = new Database(file(), { readonly: true });
    try {
      return db.prepare(sql).all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  };
  sessionContract(
    () => {
      n += 1;
      return openStore(file(), { maxImageBytes: 1000 });
    },
    rows,
    () => openStore(file(), { maxImageBytes: 1000 }),
  );
});

describeWithPostgres('listener sessions store: PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  sessionContract(
    async () => {
      const store = await openStore(database.url, { maxImageBytes: 1000 });
      await database.query(
        'TRUNCATE tracks, listener_sessions, listener_session_bounds, icecast_mounts, listener_open_mounts, listener_open_channels, listener_open_listeners CASCADE',
      );
      return store;
    },
    (sql) => database.query(sql),
    () => openStore(database.url, { maxImageBytes: 1000 }),
  );
});
