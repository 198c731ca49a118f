import path from 'node:path';
import { countListeners, listenerOf, type SessionInterval } from '../../../src/domain/play';
import { openStore } from '../../../src/store/open-store';
import type { Store } from '../../../src/store/store';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { makeTempDir } from '../../helpers/temp-dir';

// The listener-session half of the play log's store (src/store/plays.ts), on both backends: a
// play's listeners counted by one SQL aggregate agree with countListeners (domain/play.ts) on
// a seeded month of sessions with reconnects; the open-session cap per mount; replays; the
// bounded lifetime; an Icecast restart; a mount's live stretches (docs/play-log.md
// "Sessions that must be plausible").

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

function sessionContract(openFresh: () => Promise<Store>): void {
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
  sessionContract(() => openStore(path.join(temp.dir, `sessions-${(n += 1)}.db`), { maxImageBytes: 1000 }));
});

describeWithPostgres('listener sessions store: PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  sessionContract(async () => {
    const store = await openStore(database.url, { maxImageBytes: 1000 });
    await database.query('TRUNCATE tracks, listener_sessions, listener_session_bounds, icecast_mounts CASCADE');
    return store;
  });
});
