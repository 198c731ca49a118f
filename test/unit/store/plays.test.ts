import path from 'node:path';
import { openDatabase } from '../../../src/store/sqlite/database';
import { MIGRATIONS } from '../../../src/store/sqlite/migrations';
import { openStore } from '../../../src/store/open-store';
import type { NewPlay } from '../../../src/domain/play';
import type { PlayRow, ListenerSession } from '../../../src/store/plays';
import { POSTGRES_MIGRATIONS, migratePostgres } from '../../../src/store/postgres/migrations';
import type { Store } from '../../../src/store/store';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { makeTempDir } from '../../helpers/temp-dir';
import pg from 'pg';

// The play log's store contract (docs/play-log.md), on both backends: air times, trims, ends,
// listener sessions and the streamed reads the reports use.

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, 0) + seconds * 1000).toISOString();

/** Every row of a store's pages, and no page empty. */
async function collect<T>(pages: AsyncIterable<readonly T[]>): Promise<T[]> {
  const all: T[] = [];
  for await (const page of pages) {
    expect(page.length).toBeGreaterThan(0);
    all.push(...page);
  }
  return all;
}

function playContract(openFresh: () => Promise<Store>): void {
  let store: Store;
  beforeEach(async () => {
    store = await openFresh();
  });
  afterEach(() => store.close());
  const play = async (startedSecond: number, extra: Partial<NewPlay> = {}, title = 't') =>
    store.tracks.insert({
      receivedSeq: await store.tracks.nextReceivedSeq(),
      receivedAt: at(startedSecond + 1),
      metadata: { artist: 'A', title },
      play: { startedAt: at(startedSecond), channel: 'main', kind: 'music', usage: 'feature', ...extra },
    });

  it('When plays follow each other, then each ends where the next starts, with reason next; the last is on air', async () => {
    const one = await play(0, { dj: 'Ana', show: 'Morning' });
    const two = await play(180);
    expect(two.play).toMatchObject({ startedAt: at(180), endedAt: null, endReason: null, listeners: null });
    const first = await store.tracks.byDbid(one.dbid);
    expect(first?.play).toEqual({
      startedAt: at(0),
      endedAt: at(180),
      endReason: 'next',
      channel: 'main',
      kind: 'music',
      usage: 'feature',
      dj: 'Ana',
      show: 'Morning',
      listeners: null,
    });
    expect((await store.tracks.current())?.play?.endedAt).toBeNull();
  });

  it('When plays of interleaved channels are stored at once, then each ends where the next one of its own channel starts, or at its planned end', async () => {
    const channels = ['main', 'two', 'main', 'two', 'main', 'three'];
    const seqs: number[] = [];
    while (seqs.length < channels.length) seqs.push(await store.tracks.nextReceivedSeq());
    // Given in one tick: on PostgreSQL all but the first are stored in one batch (tracks.ts createInsertQueue).
    const stored = await Promise.all(
      channels.map((channel, i) =>
        store.tracks.insert({
          receivedSeq: seqs[i] ?? 0,
          receivedAt: at(i * 60 + 1),
          metadata: { artist: 'A', title: `t${i}` },
          play: { startedAt: at(i * 60), channel, kind: 'music', usage: 'feature', ...(i === 1 ? { plannedEndAt: at(90) } : {}) },
        }),
      ),
    );
    const plays = await Promise.all(stored.map(async (record) => (await store.tracks.byDbid(record.dbid))?.play));
    expect(plays.map((p) => [p?.channel, p?.startedAt, p?.endedAt, p?.endReason])).toEqual([
      ['main', at(0), at(120), 'next'],
      ['two', at(60), at(90), 'duration'],
      ['main', at(120), at(240), 'next'],
      ['two', at(180), null, null],
      ['main', at(240), null, null],
      ['three', at(300), null, null],
    ]);
  });

  it('When a play says it started before the previous one ended, then the previous one is trimmed and the cut is kept', async () => {
    const one = await play(0);
    expect(await store.plays.end('main', at(200), 'explicit')).toBe(one.dbid);
    await play(190);
    const first = await store.tracks.byDbid(one.dbid);
    expect(first?.play).toMatchObject({ endedAt: at(190), endReason: 'next', trimmedSeconds: 10 });
  });

  it('When a play is removed, then the play it had ended runs on to the next one, or is on air again', async () => {
    const one = await play(0);
    const two = await play(100);
    const three = await play(200);
    expect(await store.tracks.remove(two.dbid)).toBe(true);
    expect((await store.tracks.byDbid(one.dbid))?.play).toMatchObject({ endedAt: at(200), endReason: 'next' });
    expect(await store.tracks.remove(three.dbid)).toBe(true);
    expect((await store.tracks.byDbid(one.dbid))?.play).toMatchObject({ endedAt: null, endReason: null });
    expect(await store.tracks.remove(three.dbid)).toBe(false);
  });

  it('When a play says it started before the previous one started, then it starts with it: never out of order', async () => {
    await play(100);
    const early = await play(50);
    expect(early.play?.startedAt).toBe(at(100));
  });

  it('When channels differ, then their plays do not end each other', async () => {
    const main = await play(0);
    await play(10, { channel: '/live.ogg' });
    expect((await store.tracks.byDbid(main.dbid))?.play?.endedAt).toBeNull();
    expect(await store.plays.end('/live.ogg', at(20), 'source_disconnect')).not.toBeNull();
    expect(await store.plays.end('/live.ogg', at(30), 'explicit')).toBeNull();
  });

  it('When a submitted duration runs out, then endDue ends the play at its planned end; a next play after that does not move it', async () => {
    const one = await play(0, { plannedEndAt: at(30) });
    expect(await store.plays.nextPlannedEnd()).toBe(at(30));
    expect(await store.plays.endDue(at(29))).toEqual([]);
    expect(await store.plays.endDue(at(31))).toEqual([one.dbid]);
    await play(40);
    expect((await store.tracks.byDbid(one.dbid))?.play).toMatchObject({ endedAt: at(30), endReason: 'duration' });
    expect(await store.plays.nextPlannedEnd()).toBeNull();
  });

  it('When plays end, then they wait to be counted once, and the counted listeners are kept', async () => {
    const one = await play(0);
    await play(60);
    expect(await store.plays.uncounted(10)).toEqual([{ dbid: one.dbid, channel: 'main', startedAt: at(0), endedAt: at(60) }]);
    await store.plays.setListeners(one.dbid, { atp: 2, listener_seconds: 90, peak: 2 });
    expect(await store.plays.uncounted(10)).toEqual([]);
    expect((await store.tracks.byDbid(one.dbid))?.play?.listeners).toEqual({ atp: 2, listener_seconds: 90, peak: 2 });
  });

  it('When a recount replaces a kept count, then the new count stands, counted, and a late first count does not undo it', async () => {
    const one = await play(0);
    await play(60);
    await store.plays.setListeners(one.dbid, { atp: 0, listener_seconds: 0, peak: 0 });
    const version = store.plays.version();
    await store.plays.replaceListeners(one.dbid, { atp: 3, listener_seconds: 120, peak: 2 });
    expect(store.plays.version()).toBeGreaterThan(version);
    await store.plays.setListeners(one.dbid, { atp: 0, listener_seconds: 0, peak: 0 });
    expect(await store.plays.uncounted(10)).toEqual([]);
    expect((await store.tracks.byDbid(one.dbid))?.play?.listeners).toEqual({ atp: 3, listener_seconds: 120, peak: 2 });
  });

  it('When a listener learnt of late was connected since some moment, then exactly the counted plays that ended after it are counted again', async () => {
    const plays = [await play(0), await play(60), await play(120), await play(180)];
    await play(240, { channel: 'other' });
    await play(300, { channel: 'other' });
    for (const { dbid } of await store.plays.uncounted(10)) await store.plays.setListeners(dbid, { atp: 0, listener_seconds: 0, peak: 0 });
    // Connected at 90 s: the play on air then (60-120 s) and the later ones of its channel, not another channel's.
    expect(await store.plays.recountFrom('main', at(90))).toBe(2);
    expect((await store.plays.uncounted(10)).map((entry) => entry.dbid)).toEqual([plays[1]?.dbid, plays[2]?.dbid]);
    // Connected exactly when a play ended: that play is not counted again.
    await store.plays.setListeners(plays[1]?.dbid ?? 0, null);
    await store.plays.setListeners(plays[2]?.dbid ?? 0, null);
    expect(await store.plays.recountFrom('main', at(180))).toBe(0);
    expect(await store.plays.recountFrom('main', at(179))).toBe(1);
  });

  it('When a range is read, then plays come oldest first, filtered by channel, across pages', async () => {
    for (let i = 0; i < 520; i += 1) await play(i * 10, { channel: i % 2 === 0 ? 'main' : 'two' }, `t${i}`);
    const main: PlayRow[] = await collect(store.plays.playPages({ from: at(0), to: at(5200), channel: 'main' }));
    expect(main).toHaveLength(260);
    expect(main[0]?.metadata.title).toBe('t0');
    expect(main.every((row, index) => index === 0 || (main[index - 1]?.play.startedAt ?? '') <= row.play.startedAt)).toBe(true);
    const all = await collect(store.plays.playPages({ from: at(100), to: at(200) }));
    expect(all.map((row) => row.metadata.title)).toEqual(['t10', 't11', 't12', 't13', 't14', 't15', 't16', 't17', 't18', 't19']);
  });

  it('When 1,000 plays arrive with random starts, durations and ends on three channels, then no two plays of a channel ever overlap', async () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const channels = ['main', '/live.ogg', 'two'];
    for (let i = 0; i < 1000; i += 1) {
      const channel = channels[Math.floor(random() * 3)] ?? 'main';
      const second = i * 20 + Math.floor(random() * 600) - 300;
      const duration = random() < 0.3 ? Math.floor(random() * 60) + 1 : undefined;
      await play(second, { channel, ...(duration ? { plannedEndAt: at(second + duration) } : {}) }, `t${i}`);
      if (random() < 0.1) await store.plays.end(channel, at(second + Math.floor(random() * 100)), 'explicit');
      if (random() < 0.1) await store.plays.endDue(at(second + 30));
    }
    for (const channel of channels) {
      const rows = await collect(store.plays.playPages({ from: at(-1000), to: at(30_000), channel }));
      expect(rows.length).toBeGreaterThan(250);
      rows.forEach((row, index) => {
        const next = rows[index + 1];
        if (row.play.endedAt !== null) expect(row.play.endedAt >= row.play.startedAt).toBe(true);
        if (!next) return;
        expect(row.play.endedAt).not.toBeNull();
        expect((row.play.endedAt ?? '') <= next.play.startedAt).toBe(true);
      });
    }
  });

  it('When listeners come and go, then sessions are kept, overlap a play as the rule says, and are read by range', async () => {
    const key = (clientId: string) => ({ server: 'http://127.0.0.1:8000', mount: '/live.mp3', clientId });
    const open = (clientId: string, second: number) =>
      store.plays.openSession({ ...key(clientId), channel: 'main', source: 'auth', address: `h${clientId}`, userAgent: 'curl', connectedAt: at(second) }, 100);
    await open('1', 0);
    await open('1', 5); // a repeated listener_add: one session
    await open('2', 100);
    await open('3', 300);
    expect(await store.plays.closeSession(key('1'), at(50))).toBe(true);
    expect(await store.plays.closeSession(key('1'), at(60))).toBe(false);
    expect(await store.plays.closeSession(key('3'), at(400))).toBe(true);
    expect((await store.plays.openSessions('http://127.0.0.1:8000', '/live.mp3')).map((s) => s.clientId)).toEqual(['2']);
    const count = (from: number, to: number) => store.plays.countListeners('main', at(from), at(to), { minSessionSeconds: 0, now: at(1000) });
    expect(await count(40, 310)).toEqual({ atp: 3, listener_seconds: 10 + 210 + 10, peak: 2 });
    expect(await count(60, 100)).toEqual({ atp: 0, listener_seconds: 0, peak: 0 });
    const sessions: ListenerSession[] = await collect(store.plays.sessionPages({ from: at(410), to: at(500) }));
    expect(sessions.map((s) => [s.clientId, s.disconnectedAt])).toEqual([['2', null]]);
    const all = await collect(store.plays.sessionPages({ from: at(0), to: at(1000), channel: 'main' }));
    expect(all.map((s) => s.clientId)).toEqual(['1', '2', '3']);
  });
}

const OLD_PLAYS = [
  ['2026-01-01T10:00:00.000Z', 'a'],
  ['2026-01-01T10:03:00.000Z', 'b'],
  ['2026-01-01T10:07:30.000Z', 'c'],
] as const;

describe('play log store: SQLite', () => {
  const temp = makeTempDir();
  afterAll(() => temp.cleanup());
  let n = 0;
  playContract(() => openStore(path.join(temp.dir, `plays-${(n += 1)}.db`), { maxImageBytes: 1000 }));

  it('When a database of the previous schema is upgraded, then every record is kept with air times from the arrivals', async () => {
    const file = path.join(temp.dir, 'upgrade.db');
    const old = openDatabase(
      file,
      MIGRATIONS.filter((m) => m.version < 9),
    );
    const insert = old.prepare('INSERT INTO tracks (received_seq, received_at, stored_at, metadata) VALUES (?, ?, ?, ?)');
    OLD_PLAYS.forEach(([receivedAt, title], index) => insert.run(index + 1, receivedAt, receivedAt, JSON.stringify({ title })));
    old.close();
    const store = await openStore(file, { maxImageBytes: 1000 });
    try {
      const rows = await collect(store.plays.playPages({ from: '2026-01-01', to: '2026-01-02' }));
      expect(rows.map((row) => [row.metadata.title, row.play.startedAt, row.play.endedAt, row.play.endReason])).toEqual([
        ['a', OLD_PLAYS[0][0], OLD_PLAYS[1][0], 'next'],
        ['b', OLD_PLAYS[1][0], OLD_PLAYS[2][0], 'next'],
        ['c', OLD_PLAYS[2][0], null, null],
      ]);
      expect(await store.plays.uncounted(10)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describeWithPostgres('play log store: PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  playContract(async () => {
    const store = await openStore(database.url, { maxImageBytes: 1000 });
    await database.query(
      'TRUNCATE tracks, listener_sessions, listener_session_bounds, icecast_mounts, listener_open_mounts, listener_open_channels, listener_open_listeners CASCADE',
    );
    return store;
  });

  it('When a database of the previous schema is upgraded, then every record is kept with air times from the arrivals', async () => {
    const fresh = await createTestDatabase();
    try {
      const client = new pg.Client({ connectionString: fresh.url });
      await client.connect();
      const pool = { query: client.query.bind(client) } as unknown as pg.PoolClient;
      await migratePostgres(
        pool,
        POSTGRES_MIGRATIONS.filter((m) => m.version < 6),
      );
      for (const [index, [receivedAt, title]] of OLD_PLAYS.entries()) {
        await client.query('INSERT INTO tracks (received_seq, received_at, metadata) VALUES ($1, $2, $3)', [index + 1, receivedAt, JSON.stringify({ title })]);
      }
      await client.end();
      const store = await openStore(fresh.url, { maxImageBytes: 1000 });
      try {
        const rows = await collect(store.plays.playPages({ from: '2026-01-01', to: '2026-01-02' }));
        expect(rows.map((row) => [row.metadata.title, row.play.startedAt, row.play.endedAt, row.play.endReason])).toEqual([
          ['a', OLD_PLAYS[0][0], OLD_PLAYS[1][0], 'next'],
          ['b', OLD_PLAYS[1][0], OLD_PLAYS[2][0], 'next'],
          ['c', OLD_PLAYS[2][0], null, null],
        ]);
      } finally {
        await store.close();
      }
    } finally {
      await fresh.drop();
    }
  });
});
