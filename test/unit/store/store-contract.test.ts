import fs from 'node:fs';
import { recordJson } from '../../../src/domain/play';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { openDatabase } from '../../../src/store/sqlite/database';
import { ImageRejected } from '../../../src/store/images';
import { openStore } from '../../../src/store/open-store';
import { EXPAND_BATCH, type MessageOf, type NewOutputChange, type OutputEvent } from '../../../src/store/outputs';
import { POSTGRES_MIGRATIONS } from '../../../src/store/postgres/migrations';
import type { Store } from '../../../src/store/store';
import { MAGIC, fakeJpeg, makePng } from '../../helpers/images';
import { IDEMPOTENCY_KEEP_MS, IDEMPOTENCY_TOTALS_SQL, TRIM_BATCH, oldestKeysSql, type IdempotencyBounds } from '../../../src/store/idempotency';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { MAX_REQUESTS_PER_WINDOW, MAX_WAITING_PER_REQUESTER, REQUEST_WINDOW_MS, normaliseName, type NewSongRequest } from '../../../src/domain/song-request';
import { makeTempDir } from '../../helpers/temp-dir';
import { storedCount } from '../../helpers/stored-count';

// The store contract (docs/several-instances.md): one suite, run against both backends. SQLite on a real file in
// a temp dir; PostgreSQL on a database of its own, created for this run and dropped after it.

/** The lookup cache keeps a found answer 7 days and "not found" 1 day (docs/enrichment.md). */
const DAY_MS = 24 * 60 * 60 * 1000;

interface Backend {
  /** Opens the store on an empty database. */
  open(options: { maxImageBytes: number; now: () => number; idempotencyBounds?: IdempotencyBounds }): Promise<Store>;
  /** Rows of a query run directly on the database (backends agree on these table names). */
  rows(sql: string): Promise<Record<string, unknown>[]>;
  /** Empties the database between tests. */
  reset(): Promise<void>;
  /** The query plan of `sql` as text (SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN after ANALYZE). */
  explain(sql: string): Promise<string>;
}

function storeContract(makeBackend: () => { backend: () => Backend; setup: () => Promise<void>; teardown: () => Promise<void> }): void {
  const harness = makeBackend();
  let store: Store | undefined;
  let clock: number;
  beforeAll(() => harness.setup());
  afterAll(() => harness.teardown());
  beforeEach(async () => {
    await harness.backend().reset();
    clock = 1_000_000;
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });
  const open = async (maxImageBytes = 1024 * 1024, idempotencyBounds?: IdempotencyBounds): Promise<Store> => {
    store = await harness.backend().open({ maxImageBytes, now: () => clock, ...(idempotencyBounds ? { idempotencyBounds } : {}) });
    return store;
  };
  /** The store the test opened. */
  const opened = (): Store => {
    if (!store) throw new Error('open() first');
    return store;
  };
  /** Image blobs held in the database, whatever links or caches say. */
  const storedImages = async (): Promise<number> => Number((await harness.backend().rows('SELECT count(*) AS n FROM image_blobs'))[0]?.n);
  const addTrack = async (artist: string, album = 'B') =>
    opened().tracks.insert({
      receivedSeq: await opened().tracks.nextReceivedSeq(),
      receivedAt: new Date().toISOString(),
      metadata: { artist, album, title: 't' },
    });

  describe('tracks', () => {
    it('When many records are stored at once on two channels, then dbids follow the calls on each channel and each play ends where the next on its channel starts', async () => {
      await open();
      const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
      const stored = await Promise.all(
        Array.from({ length: 40 }, async (_, index) =>
          opened().tracks.insert({
            receivedSeq: index + 1,
            receivedAt: at(index),
            metadata: { artist: 'A', title: `t${index}` },
            play: { channel: index % 2 === 0 ? 'even' : 'odd', startedAt: at(index), kind: 'music', usage: 'feature' },
          }),
        ),
      );
      expect(stored.map((record) => record.metadata.title)).toEqual(Array.from({ length: 40 }, (_, index) => `t${index}`));
      for (const channel of ['even', 'odd']) {
        // Each channel has its own insert queue on PostgreSQL (docs/channels.md, "Order across channels"):
        // dbids follow the calls within a channel, not across channels.
        const dbids = stored.filter((record) => record.play?.channel === channel).map((record) => record.dbid);
        expect(dbids).toEqual([...dbids].sort((a, b) => a - b));
        const plays: { play: { startedAt: string; endedAt: string | null } }[] = [];
        for await (const page of opened().plays.playPages({ from: at(0), to: at(59), channel })) plays.push(...page);
        expect(plays).toHaveLength(20);
        plays.forEach((row, index) => expect(row.play.endedAt).toBe(plays[index + 1]?.play.startedAt ?? null));
      }
    });

    it('When plays are stored on several channels, then each channel has its current record and since() reads one channel', async () => {
      await open();
      const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
      const channels = ['FM', 'Web', 'FM', 'Studio B', 'Web', 'FM'];
      const stored = [];
      for (const [index, channel] of channels.entries()) {
        stored.push(
          await opened().tracks.insert({
            receivedSeq: index + 1,
            receivedAt: at(index),
            metadata: { title: `t${index}` },
            play: { channel, startedAt: at(index), kind: 'music', usage: 'feature' },
          }),
        );
      }
      const current = await opened().tracks.currentPerChannel(10);
      expect(current.map((record) => [record.play?.channel, record.metadata.title]).sort()).toEqual([
        ['FM', 't5'],
        ['Studio B', 't3'],
        ['Web', 't4'],
      ]);
      expect((await opened().tracks.currentPerChannel(2)).length).toBe(2);
      expect((await opened().tracks.currentPerChannel(10, 'Web')).map((record) => record.metadata.title)).toEqual(['t4']);
      expect(await opened().tracks.currentPerChannel(10, 'nowhere')).toEqual([]);
      expect((await opened().tracks.since(stored[0]?.dbid ?? 0, 10, 'FM')).map((record) => record.metadata.title)).toEqual(['t2', 't5']);
    });

    it('When records are stored, then dbids increase, the last arrival is current, and the metadata round-trips in its key order', async () => {
      await open();
      expect(await opened().tracks.current()).toBeNull();
      const first = await addTrack('A');
      const second = await addTrack('B');
      expect(second.dbid).toBeGreaterThan(first.dbid);
      expect(await opened().tracks.current()).toEqual(second);
      expect(Object.keys((await opened().tracks.byDbid(first.dbid))?.metadata ?? {})).toEqual(['artist', 'album', 'title']);
      expect(await opened().tracks.byDbid(second.dbid + 1000)).toBeNull();
      expect(await storedCount(opened().tracks)).toBe(2);
    });

    it('When a submission that arrived earlier is stored later, then the one stored last (the highest dbid) is current', async () => {
      await open();
      const early = await opened().tracks.nextReceivedSeq();
      const late = await opened().tracks.nextReceivedSeq();
      expect(late).toBeGreaterThan(early);
      await opened().tracks.insert({ receivedSeq: late, receivedAt: 'x', metadata: { title: 'late' } });
      const storedLast = await opened().tracks.insert({ receivedSeq: early, receivedAt: 'x', metadata: { title: 'early' } });
      expect((await opened().tracks.current())?.dbid).toBe(storedLast.dbid);
    });

    it('When many arrivals ask for their numbers at once, then each gets its own, increasing in the order they asked', async () => {
      await open();
      const before = await opened().tracks.nextReceivedSeq();
      // Asked in one tick: on PostgreSQL all but the first share one round trip (tracks.ts createSeqQueue).
      const numbers = await Promise.all(Array.from({ length: 40 }, () => opened().tracks.nextReceivedSeq()));
      expect(numbers[0]).toBeGreaterThan(before);
      expect(new Set(numbers).size).toBe(40);
      expect([...numbers].sort((a, b) => a - b)).toEqual(numbers);
    });

    it('When metadata is replaced, then reads see the new fields; since() lists later records oldest first', async () => {
      await open();
      const first = await addTrack('A');
      const second = await addTrack('B');
      const third = await addTrack('C');
      await opened().tracks.updateMetadata(first.dbid, { ...first.metadata, coverurl: 'cover/x' });
      expect((await opened().tracks.byDbid(first.dbid))?.metadata.coverurl).toBe('cover/x');
      expect((await opened().tracks.since(first.dbid, 10)).map((record) => record.dbid)).toEqual([second.dbid, third.dbid]);
      expect((await opened().tracks.since(first.dbid, 1)).map((record) => record.dbid)).toEqual([second.dbid]);
    });

    it('When history is paged, then it is newest first by received time, never older than a stored one, with a working cursor, and filters by time', async () => {
      await open();
      const times = ['2026-11-22T20:00:02.000Z', '2026-11-22T20:00:03.000Z', '2026-11-22T20:00:01.000Z', '2026-11-22T20:00:03.000Z'];
      const dbids: number[] = [];
      const stored: string[] = [];
      for (const [i, receivedAt] of times.entries()) {
        const record = await opened().tracks.insert({ receivedSeq: i + 1, receivedAt, metadata: { title: `T${i}` } });
        dbids.push(record.dbid);
        stored.push(record.receivedAt);
      }
      // A body that arrived slowly is stored with the newest time so far: the newest history entry is the highest dbid.
      expect(stored).toEqual([times[0], times[1], times[1], times[3]]);
      const seen: number[] = [];
      let before: number | undefined;
      for (;;) {
        const page = await opened().tracks.history({ limit: 1, before });
        seen.push(...page.records.map((record) => record.dbid));
        if (!page.more) break;
        before = page.records.at(-1)?.dbid;
      }
      expect(seen).toEqual([dbids[3], dbids[2], dbids[1], dbids[0]]);
      const window = await opened().tracks.history({ limit: 10, since: '2026-11-22T20:00:02.000Z', until: '2026-11-22T20:00:03.000Z' });
      expect(window).toEqual({ records: [expect.objectContaining({ dbid: dbids[0] })], more: false });
    });

    it('When a record is removed, then it is gone, the version and the removals count move, and removing it again says so', async () => {
      await open();
      const first = await addTrack('A');
      const second = await addTrack('B');
      const version = opened().tracks.version();
      const removals = opened().tracks.removals();
      expect(await opened().tracks.remove(second.dbid)).toBe(true);
      expect(opened().tracks.version()).not.toBe(version);
      expect(opened().tracks.removals()).toBe(removals + 1);
      expect(await opened().tracks.remove(second.dbid)).toBe(false);
      expect(opened().tracks.removals()).toBe(removals + 1);
      expect(await opened().tracks.byDbid(second.dbid)).toBeNull();
      expect((await opened().tracks.current())?.dbid).toBe(first.dbid);
      // A deleted dbid is never given again.
      expect((await addTrack('C')).dbid).toBeGreaterThan(second.dbid);
    });

    it('When the store is reopened, then arrival numbers continue after the stored ones', async () => {
      await open();
      const stored = await addTrack('A');
      await opened().close();
      await open();
      expect(await opened().tracks.nextReceivedSeq()).toBeGreaterThan(stored.receivedSeq);
      expect((await opened().tracks.current())?.dbid).toBe(stored.dbid);
    });

    it('When the database takes writes, then probeWrite resolves and changes nothing', async () => {
      await open();
      const stored = await addTrack('A');
      await expect(opened().probeWrite()).resolves.toBeUndefined();
      expect((await opened().tracks.history({ limit: 10 })).records.map((record) => record.dbid)).toEqual([stored.dbid]);
    });
  });

  describe('images', () => {
    it('When an image is stored, then its key is the SHA-256 of the bytes and the MIME type is sniffed', async () => {
      await open();
      const png = makePng(4, 4, [255, 0, 0], [0, 0, 255]);
      const stored = await opened().images.put(png);
      expect(stored).toEqual({ key: createHash('sha256').update(png).digest('hex'), mimeType: 'image/png', size: png.length });
      expect((await opened().images.get(stored.key))?.bytes.equals(png)).toBe(true);
      expect((await opened().images.put(MAGIC.gif)).mimeType).toBe('image/gif');
      expect((await opened().images.put(MAGIC.webp)).mimeType).toBe('image/webp');
    });

    it('When an image is read in slices, then the slices join up to the bytes; an unknown key is null', async () => {
      await open(32 * 1024 * 1024);
      const big = fakeJpeg(1_000_003, 5);
      const { key } = await opened().images.put(big);
      const parts: Buffer[] = [];
      for (let offset = 0; offset < big.length; offset += 65_536) parts.push((await opened().images.slice(key, offset, 65_536)) ?? Buffer.alloc(0));
      expect(parts.at(-1)?.length).toBe(big.length % 65_536);
      expect(Buffer.concat(parts).equals(big)).toBe(true);
      expect(await opened().images.slice('0'.repeat(64), 0, 10)).toBeNull();
    });

    it('When the same bytes are stored twice, then there is one copy', async () => {
      await open();
      const first = await opened().images.put(MAGIC.jpeg);
      const second = await opened().images.put(Buffer.from(MAGIC.jpeg));
      expect(second.key).toBe(first.key);
      expect(await storedImages()).toBe(1);
    });

    it('When bytes are not an image, larger than 10 MiB or than the whole store, then they are refused and nothing is stored', async () => {
      await open(64 * 1024 * 1024);
      await expect(opened().images.put(Buffer.from('<svg></svg> padding'))).rejects.toThrow(ImageRejected);
      await expect(opened().images.put(fakeJpeg(10 * 1024 * 1024 + 1, 1))).rejects.toThrow(/over the per-image limit/);
      expect(await storedImages()).toBe(0);
      expect((await opened().images.put(fakeJpeg(10 * 1024 * 1024, 2))).size).toBe(10 * 1024 * 1024);
      await opened().close();
      await open(1000);
      await expect(opened().images.put(fakeJpeg(4000, 3))).rejects.toMatchObject({ reason: 'over-budget' });
    });

    it('When the total passes the bound, then the least recently used images are evicted with their links', async () => {
      await open(3000);
      const track = await addTrack('A');
      const keys: string[] = [];
      for (const seed of [1, 2, 3]) {
        clock += 1000;
        keys.push((await opened().images.put(fakeJpeg(1000, seed))).key);
      }
      const [k0, k1, k2] = keys as [string, string, string];
      await opened().images.link([{ dbid: track.dbid, category: 'fanart', key: k0, artistKey: 'a', albumKey: 'b', source: 'test' }]);
      // Served long after it was stored: the first image is now the most recently used.
      clock += 120_000;
      expect(await opened().images.get(k0)).not.toBeNull();
      clock += 1000;
      const fourth = (await opened().images.put(fakeJpeg(1000, 4))).key;
      expect(await opened().images.meta(k1)).toBeNull();
      expect(await opened().images.meta(k0)).not.toBeNull();
      expect(await opened().images.meta(k2)).not.toBeNull();
      expect(await opened().images.meta(fourth)).not.toBeNull();
      expect(await storedImages()).toBe(3);

      clock += 1000;
      await opened().images.put(fakeJpeg(2500, 5));
      expect(await opened().images.imagesOf(track.dbid)).toEqual([]);
      // Only the newest fits beside nothing else: 2500 + 1000 is over 3000.
      expect(await storedImages()).toBe(1);
    });

    it('When images are linked to tracks, then they are listed per track in arrival order and found by artist or album', async () => {
      await open();
      const first = await addTrack('Björk', 'Homogenic');
      const second = await addTrack('Björk', 'Post');
      const cover1 = (await opened().images.put(fakeJpeg(100, 1))).key;
      const cover2 = (await opened().images.put(fakeJpeg(100, 2))).key;
      const fanart = (await opened().images.put(fakeJpeg(100, 3))).key;
      const link = async (dbid: number, category: 'cover' | 'fanart', key: string, album: string) =>
        (await opened().images.link([{ dbid, category, key, artistKey: 'bjork', albumKey: album, source: 'test' }])).length === 1;
      expect(await link(first.dbid, 'cover', cover1, 'homogenic')).toBe(true);
      expect(await link(first.dbid, 'fanart', fanart, 'homogenic')).toBe(true);
      expect(await link(first.dbid, 'fanart', fanart, 'homogenic')).toBe(false);
      await link(second.dbid, 'cover', cover2, 'post');
      await link(second.dbid, 'fanart', fanart, 'post');

      expect((await opened().images.imagesOf(first.dbid)).map((image) => [image.category, image.key])).toEqual([
        ['cover', cover1],
        ['fanart', fanart],
      ]);
      expect((await opened().images.find({ category: 'fanart', artistKey: 'bjork' })).map((image) => image.key)).toEqual([fanart]);
      expect((await opened().images.find({ category: 'cover', artistKey: 'bjork' })).map((image) => image.key)).toEqual([cover2, cover1]);
      expect((await opened().images.find({ category: 'cover', artistKey: 'bjork', albumKey: 'post' })).map((image) => image.key)).toEqual([cover2]);
      expect(await opened().images.find({ category: 'logo', artistKey: 'bjork' })).toEqual([]);
      // The newest of each category in one read: what find() answers first.
      const newest = await opened().images.newestOfArtist('bjork', 'homogenic');
      expect(Object.fromEntries(Object.entries(newest).map(([category, image]) => [category, image.key]))).toEqual({ cover: cover1, fanart });
      expect(Object.keys(await opened().images.newestOfArtist('bjork', ''))).toEqual(['fanart']);
      expect(await opened().images.newestOfArtist('someone else', 'post')).toEqual({});
      // A link to an image evicted meanwhile is skipped, not an error.
      expect(
        await opened().images.link([{ dbid: first.dbid, category: 'logo', key: 'f'.repeat(64), artistKey: 'bjork', albumKey: '', source: 'test' }]),
      ).toEqual([]);
    });

    it('When a provider URL was downloaded before, then its image is remembered by a hash of the URL only', async () => {
      await open();
      const key = (await opened().images.put(fakeJpeg(100, 1))).key;
      await opened().images.rememberUrl('https://images.example/a.jpg?token=abc', key);
      expect(await opened().images.keyForUrl('https://images.example/a.jpg?token=abc')).toBe(key);
      expect(await opened().images.keyForUrl('https://images.example/b.jpg')).toBeNull();
      expect(JSON.stringify(await harness.backend().rows('SELECT * FROM image_urls'))).not.toMatch(/token|images\.example/);
    });
  });

  describe('output deliveries', () => {
    // Test outputs take every event; a change's message id names its output, record and event.
    const messageOf: MessageOf = (change, output) => ({
      output,
      dbid: change.dbid,
      kind: change.event === 'deleted' ? 'track.deleted' : 'track.changed',
      messageId: `msg_${output}_${change.dbid}_${change.event}`,
      payload: change.payload,
      createdAt: change.createdAt,
    });
    const change = (dbid: number, event: OutputEvent = 'changed'): NewOutputChange => ({ event, dbid, payload: JSON.stringify({ dbid }), createdAt: clock });
    /** Records the changes, then moves them into the queues of `outputs` (as the dispatcher does after the answer). */
    const queue = async (changes: NewOutputChange[], outputs = ['hook']) => {
      for (const one of changes) await opened().outputs.record(one);
      return opened().outputs.expand(outputs, messageOf);
    };
    const claimOptions = (owner: string, latestOnly = false) => ({ owner, now: clock, leaseMs: 30_000, latestOnly });
    it('When one change is recorded twice (two instances), then it is queued once; messages are claimed oldest first, by one owner at a time', async () => {
      await open();
      const outputs = opened().outputs;
      await outputs.startCursors(['hook', 'other']);
      expect(await queue([change(1)])).toEqual({ added: new Set(['hook']), more: false });
      // One change row for every output; each output's message is added once.
      expect(await queue([change(1), change(1, 'deleted'), change(2)])).toEqual({ added: new Set(['hook']), more: false });
      const first = await outputs.claim('hook', claimOptions('a'));
      expect(first).toMatchObject({ message: { dbid: 1, kind: 'track.changed', messageId: 'msg_hook_1_changed', payload: '{"dbid":1}', attempts: 0 } });
      // The head is claimed: nobody else may take it, nor anything behind it (order per output).
      expect(await outputs.claim('hook', claimOptions('b'))).toEqual({ waitMs: 30_000 });
      expect(await outputs.claim('other', claimOptions('b'))).toBeNull();
      const id = first && 'message' in first ? first.message.id : 0;
      await outputs.finish(id, { at: clock, durationMs: 5, outcome: 'retry', status: 503, error: 'HTTP 503', nextAttemptAt: clock + 1000 });
      expect(await outputs.claim('hook', claimOptions('b'))).toEqual({ waitMs: 1000 });
      expect(await outputs.health('hook')).toEqual({
        pending: 3,
        superseded: 0,
        retrying: true,
        lastFinishedFailed: false,
        lastSuccess: null,
        lastError: { at: clock, message: 'HTTP 503' },
      });
      clock += 1000;
      const again = await outputs.claim('hook', claimOptions('b'));
      expect(again).toMatchObject({ message: { id, messageId: 'msg_hook_1_changed', attempts: 1 } });
      await outputs.finish(id, { at: clock, durationMs: 5, outcome: 'delivered', status: 200, receipt: 'r1' });
      expect(await outputs.health('hook')).toMatchObject({ pending: 2, retrying: false, lastSuccess: { at: clock, dbid: 1, receipt: 'r1' } });
      const rows = await harness.backend().rows('SELECT outcome, status FROM output_attempts ORDER BY id');
      expect(rows.map((row) => [row.outcome, Number(row.status)])).toEqual([
        ['retry', 503],
        ['delivered', 200],
      ]);
    });

    it('When an owner dies holding a claim, then the message is claimed again once its lease ran out', async () => {
      await open();
      await opened().outputs.startCursors(['hook']);
      await queue([change(1)]);
      expect(await opened().outputs.claim('hook', claimOptions('dead'))).toHaveProperty('message');
      clock += 30_001;
      expect(await opened().outputs.claim('hook', claimOptions('alive'))).toMatchObject({ message: { dbid: 1 } });
    });

    it('When only the newest counts (latestOnly), then older pending messages are superseded and the newest keeps the output waiting as long as they did', async () => {
      await open();
      const outputs = opened().outputs;
      await outputs.startCursors(['hook']);
      await queue([change(1)]);
      const first = await outputs.claim('hook', claimOptions('a', true));
      const id = first && 'message' in first ? first.message.id : 0;
      await outputs.finish(id, { at: clock, durationMs: 5, outcome: 'retry', status: 429, error: 'HTTP 429', nextAttemptAt: clock + 2000 });
      await queue([change(2)]);
      await queue([change(3)]);
      expect(await outputs.claim('hook', claimOptions('a', true))).toEqual({ waitMs: 2000 });
      expect(await outputs.health('hook')).toMatchObject({ pending: 1, retrying: true });
      clock += 2000;
      expect(await outputs.claim('hook', claimOptions('a', true))).toMatchObject({ message: { dbid: 3, attempts: 1 } });
    });

    it('When changes were queued out of dbid order (a slower instance, a late end of enrichment), then latestOnly keeps the newest dbid, not the newest row', async () => {
      await open();
      const outputs = opened().outputs;
      await outputs.startCursors(['hook']);
      // Queued while the target was down: 4 came first, then 3 (another instance), then 4's
      // second message, then 3's late one (its enrichment ended last).
      await queue([change(4), change(3), change(4, 'deleted'), change(3, 'deleted')]);
      const claimed = await outputs.claim('hook', claimOptions('a', true));
      expect(claimed).toMatchObject({ message: { dbid: 4, kind: 'track.deleted' } });
      expect(await outputs.health('hook')).toMatchObject({ pending: 1, superseded: 3 });
      await outputs.finish(claimed && 'message' in claimed ? claimed.message.id : 0, { at: clock, durationMs: 1, outcome: 'delivered' });
      // An older record's message queued after the newest was shown never goes.
      await queue([change(2)]);
      expect(await outputs.claim('hook', claimOptions('a', true))).toBeNull();
    });

    it('When a message fails for good, then the output reads failing until one is delivered; finished messages are pruned', async () => {
      await open();
      const outputs = opened().outputs;
      await outputs.startCursors(['hook']);
      await queue([change(1)]);
      const first = await outputs.claim('hook', claimOptions('a'));
      await outputs.finish(first && 'message' in first ? first.message.id : 0, { at: clock, durationMs: 1, outcome: 'failed', status: 400, error: 'HTTP 400' });
      expect(await outputs.health('hook')).toMatchObject({ pending: 0, lastFinishedFailed: true, lastError: { message: 'HTTP 400' } });
      expect(await outputs.claim('hook', claimOptions('a'))).toBeNull();
      clock += 10;
      expect(await outputs.prune(clock)).toBe(1);
      expect(await outputs.health('hook')).toMatchObject({ pending: 0, lastFinishedFailed: false, lastError: null });
    });

    it('When an output is added, then it starts after the newest change; a change recorded but not yet queued (kill -9) is queued by the next expand', async () => {
      await open();
      const outputs = opened().outputs;
      await outputs.startCursors(['hook']);
      await queue([change(1)]);
      await outputs.record(change(2));
      // A new output gets no history; starting it again moves nothing back.
      await outputs.startCursors(['hook', 'late']);
      await outputs.record(change(3));
      await outputs.startCursors(['hook', 'late']);
      expect(await outputs.expand(['hook', 'late'], messageOf)).toEqual({ added: new Set(['hook', 'late']), more: false });
      const queued = await harness.backend().rows('SELECT output, dbid FROM output_messages ORDER BY id');
      expect(queued.map((row) => `${String(row.output)} ${Number(row.dbid)}`)).toEqual(['hook 1', 'hook 2', 'hook 3', 'late 3']);
      expect(await outputs.expand(['hook', 'late'], messageOf)).toEqual({ added: new Set(), more: false });
    });

    it('When many changes wait, then they are queued in batches, in the order they were recorded, each once, even with records and expands at once', async () => {
      await open();
      const outputs = opened().outputs;
      await outputs.startCursors(['hook']);
      for (let dbid = 1; dbid <= EXPAND_BATCH + 1; dbid++) await outputs.record(change(dbid));
      expect(await outputs.expand(['hook'], messageOf)).toEqual({ added: new Set(['hook']), more: true });
      expect(await outputs.expand(['hook'], messageOf)).toEqual({ added: new Set(['hook']), more: false });
      // Writers and expanders interleaved (several instances, or one with a pool of connections).
      const first = EXPAND_BATCH + 2;
      await Promise.all(
        Array.from({ length: 40 }, async (_, index) => {
          await outputs.record(change(first + index));
          await outputs.expand(['hook'], messageOf);
        }),
      );
      await outputs.expand(['hook'], messageOf);
      const dbids = (await harness.backend().rows('SELECT dbid FROM output_messages ORDER BY id')).map((row) => Number(row.dbid));
      const recorded = (await harness.backend().rows('SELECT dbid FROM output_changes ORDER BY id')).map((row) => Number(row.dbid));
      expect(dbids).toEqual(recorded);
      expect(new Set(dbids).size).toBe(EXPAND_BATCH + 41);
    });
  });

  describe('delivery promises', () => {
    // Like the dispatcher: webhooks are told after enrichment, so their message is taken at the change, held.
    const HOLD_MS = 5000;
    const heldMessageOf: MessageOf = (change, output) => {
      const base = {
        output,
        dbid: change.dbid,
        kind: 'track.changed' as const,
        messageId: `msg_${output}_${change.dbid}_${change.event}`,
        payload: change.payload,
        createdAt: change.createdAt,
      };
      if (change.event === 'changed') return { ...base, heldUntil: change.createdAt + HOLD_MS };
      return change.event === 'settled' ? base : undefined;
    };
    const claimOptions = (owner: string, latestOnly = false) => ({ owner, now: clock, leaseMs: 30_000, latestOnly });
    const deliver = async (output: string, latestOnly = false) => {
      const answer = await opened().outputs.claim(output, claimOptions('a', latestOnly));
      if (!answer || !('message' in answer)) return answer;
      await opened().outputs.finish(answer.message.id, { at: clock, durationMs: 1, outcome: 'delivered' });
      return answer.message;
    };

    it('When a track is stored, then its change row is in the same write, with the /v1/last payload; its Idempotency-Key gets the dbid', async () => {
      await open();
      await opened().idempotency.claim('key-1', 'f', clock, 60_000);
      const record = await opened().tracks.insert({
        receivedSeq: 1,
        receivedAt: new Date(clock).toISOString(),
        metadata: { artist: 'A', title: 'T' },
        idempotencyKey: 'key-1',
      });
      const changes = await harness.backend().rows('SELECT event, dbid, payload FROM output_changes');
      expect(changes.map((row) => ({ ...row, dbid: Number(row.dbid) }))).toEqual([
        { event: 'changed', dbid: record.dbid, payload: JSON.stringify(recordJson(record)) },
      ]);
      expect(await opened().idempotency.claim('key-1', 'f', clock, 60_000)).toEqual({ state: 'pending', fingerprint: 'f', dbid: record.dbid });
      // A first request that failed after storing keeps its key: a retry is answered with the dbid, never stores again.
      await opened().idempotency.forget('key-1');
      expect(await opened().idempotency.claim('key-1', 'f', clock + 120_000, 60_000)).toEqual({ state: 'pending', fingerprint: 'f', dbid: record.dbid });
      // A record taken back (a 408) frees its key once the lease is over: a retry runs again.
      await opened().tracks.remove(record.dbid);
      expect(await opened().idempotency.claim('key-1', 'f', clock + 120_000, 60_000)).toEqual({ state: 'new' });
      const empty = await opened().tracks.insert({ receivedSeq: 2, receivedAt: new Date(clock).toISOString(), metadata: {} });
      const payloads = (await harness.backend().rows('SELECT payload FROM output_changes ORDER BY id')).map((row) => String(row.payload));
      expect(payloads[1]).toBe(JSON.stringify(recordJson(empty)));
    });

    it('When a record is still being enriched, then its held message holds the ones behind it until its end of enrichment releases it with the enriched payload', async () => {
      await open();
      clock = Date.now();
      const outputs = opened().outputs;
      await outputs.startCursors(['hook']);
      const first = await opened().tracks.insert({ receivedSeq: 1, receivedAt: 'a', metadata: { title: 'one' } });
      const second = await opened().tracks.insert({ receivedSeq: 2, receivedAt: 'b', metadata: { title: 'two' } });
      clock = Date.now() + 50;
      await outputs.record({ event: 'settled', dbid: second.dbid, payload: '{"enriched":2}', createdAt: clock });
      await outputs.expand(['hook'], heldMessageOf);
      // The first is held (its hold runs from the change's own time); the second, settled, waits behind it.
      const wait = await outputs.claim('hook', claimOptions('a'));
      expect(wait).toHaveProperty('waitMs');
      expect((wait as { waitMs: number }).waitMs).toBeGreaterThan(0);
      await outputs.record({ event: 'settled', dbid: first.dbid, payload: '{"enriched":1}', createdAt: clock });
      await outputs.expand(['hook'], heldMessageOf);
      expect(await deliver('hook')).toMatchObject({ dbid: first.dbid, payload: '{"enriched":1}' });
      expect(await deliver('hook')).toMatchObject({ dbid: second.dbid, payload: '{"enriched":2}' });
      expect(await outputs.claim('hook', claimOptions('a'))).toBeNull();
      // A late end of enrichment after delivery adds nothing: each message once.
      await outputs.record({ event: 'settled', dbid: first.dbid, payload: '{"again":1}', createdAt: clock });
      expect(await outputs.expand(['hook'], heldMessageOf)).toEqual({ added: new Set(), more: false });
    });

    it('When the hold runs out (the instance died mid-enrichment), then the message goes with what is stored, or is superseded when the record is gone', async () => {
      await open();
      const outputs = opened().outputs;
      await outputs.startCursors(['hook']);
      const kept = await opened().tracks.insert({ receivedSeq: 1, receivedAt: 'a', metadata: { title: 'kept' } });
      const gone = await opened().tracks.insert({ receivedSeq: 2, receivedAt: 'b', metadata: { title: 'gone' } });
      await outputs.expand(['hook'], heldMessageOf);
      await opened().tracks.updateMetadata(kept.dbid, { title: 'kept', album: 'filled' });
      await opened().tracks.remove(gone.dbid);
      clock = Date.now() + HOLD_MS + 1;
      expect(await deliver('hook')).toMatchObject({ dbid: kept.dbid });
      const sent = await harness.backend().rows("SELECT payload FROM output_messages WHERE state = 'delivered'");
      expect(JSON.parse(String(sent[0]?.payload))).toMatchObject({ dbid: kept.dbid, title: 'kept' });
      expect(await outputs.claim('hook', claimOptions('a'))).toEqual({ waitMs: 0 });
      expect(await outputs.claim('hook', claimOptions('a'))).toBeNull();
      expect(await outputs.health('hook')).toMatchObject({ superseded: 1, pending: 0 });
    });

    it('When a current-state target showed a newer record, then a message for an older one is superseded and counted, never sent', async () => {
      await open();
      const outputs = opened().outputs;
      await outputs.startCursors(['now']);
      const plain: MessageOf = (change, output) => ({
        output,
        dbid: change.dbid,
        kind: change.event === 'settled' ? 'track.settled' : 'track.changed',
        messageId: `m_${change.dbid}_${change.event}`,
        payload: change.payload,
        createdAt: change.createdAt,
      });
      for (const dbid of [1, 2, 3]) await outputs.record({ event: 'changed', dbid, payload: `{"dbid":${dbid}}`, createdAt: clock });
      await outputs.expand(['now'], plain);
      expect(await deliver('now', true)).toMatchObject({ dbid: 3 });
      // The first record's enrichment ends last (a slow cover): the target keeps showing the third.
      await outputs.record({ event: 'settled', dbid: 1, payload: '{"dbid":1}', createdAt: clock });
      await outputs.expand(['now'], plain);
      expect(await outputs.claim('now', claimOptions('a', true))).toBeNull();
      expect(await outputs.health('now')).toMatchObject({ superseded: 3, pending: 0, lastSuccess: { dbid: 3 } });
      await outputs.record({ event: 'settled', dbid: 3, payload: '{"dbid":3}', createdAt: clock });
      await outputs.expand(['now'], plain);
      expect(await deliver('now', true)).toMatchObject({ dbid: 3, kind: 'track.settled' });
    });

    it('When a test delivers after a message failed for good, then the output reads ok; a failed test is the last error until then', async () => {
      await open();
      const outputs = opened().outputs;
      await outputs.startCursors(['stream']);
      await opened().tracks.insert({ receivedSeq: 1, receivedAt: 'a', metadata: { title: 'one' } });
      await outputs.expand(['stream'], heldMessageOf);
      clock = Date.now() + HOLD_MS + 1;
      const message = await outputs.claim('stream', claimOptions('a'));
      await outputs.finish(message && 'message' in message ? message.message.id : 0, {
        at: clock,
        durationMs: 1,
        outcome: 'failed',
        status: 400,
        error: 'HTTP 400: nope',
      });
      expect(await outputs.health('stream')).toMatchObject({ lastFinishedFailed: true });
      await outputs.recordTest('stream', { at: clock + 1, dbid: 1, error: 'HTTP 503' });
      expect(await outputs.health('stream')).toMatchObject({ lastFinishedFailed: true, lastError: { at: clock + 1, message: 'HTTP 503' } });
      await outputs.recordTest('stream', { at: clock + 2, dbid: 1 });
      expect(await outputs.health('stream')).toMatchObject({
        lastFinishedFailed: false,
        lastSuccess: { at: clock + 2, dbid: 1 },
        // One test is kept, the latest: the last error is the message's own again.
        lastError: { message: 'HTTP 400: nope' },
      });
    });
  });

  describe('lookup cache', () => {
    it('When answers are cached, then they live for their TTL (found 7 days, not found 1 day) and expired ones are purged', async () => {
      await open();
      const found = await opened().lookupCache.put('musicbrainz', 'recording/1', { found: true, answer: '{"id":"1"}' });
      expect(found).toBe(clock + DAY_MS * 7);
      expect(await opened().lookupCache.put('musicbrainz', 'recording/2', { found: false })).toBe(clock + DAY_MS);
      expect(await opened().lookupCache.get('musicbrainz', 'recording/1')).toEqual({ found: true, answer: '{"id":"1"}', expiresAt: found });
      expect(await opened().lookupCache.get('musicbrainz', 'recording/2')).toMatchObject({ found: false });
      expect(await opened().lookupCache.get('wikidata', 'recording/1')).toBeUndefined();
      clock += DAY_MS;
      expect(await opened().lookupCache.get('musicbrainz', 'recording/2')).toBeUndefined();
      expect(await opened().lookupCache.purgeExpired()).toBe(1);
      expect(await opened().lookupCache.get('musicbrainz', 'recording/1')).toBeDefined();
    });
  });

  describe('song requests', () => {
    const request = (requester: string, artist: string, title: string, createdAt: number): NewSongRequest => ({
      requester,
      artist,
      title,
      normalizedArtist: normaliseName(artist),
      normalizedTitle: normaliseName(title),
      origin: 'lumia',
      userPlatform: 'kick',
      externalId: null,
      userInput: null,
      requestedFor: null,
      createdAt,
    });

    it('When requests are added, then they list oldest first; one requester’s repeat inside the window is the earlier one; removals answer what went', async () => {
      await open();
      const queue = opened().songRequests;
      const first = await queue.add(request('v1', 'Radiohead', 'Creep', 1000), { dedupeSince: 0, windowSince: 0 });
      expect(first).toMatchObject({ state: 'added', request: { requester: 'v1', artist: 'Radiohead', userPlatform: 'kick', createdAt: 1000 } });
      if (first.state !== 'added') throw new Error('not added');
      expect(await queue.add(request('v1', 'RADIOHEAD', 'creep', 2000), { dedupeSince: 1000, windowSince: 0 })).toEqual({
        state: 'deduped',
        request: first.request,
      });
      expect((await queue.add(request('v1', 'Radiohead', 'Creep', 40_000), { dedupeSince: 10_000, windowSince: 0 })).state).toBe('added');
      expect((await queue.add(request('v2', 'Radiohead', 'Creep', 40_001), { dedupeSince: 10_001, windowSince: 0 })).state).toBe('added');
      expect((await queue.add(request('v2', 'Nirvana', 'Breed', 40_002), { dedupeSince: 10_002, windowSince: 0 })).state).toBe('added');
      expect((await queue.list()).map((one) => [one.requester, one.title])).toEqual([
        ['v1', 'Creep'],
        ['v1', 'Creep'],
        ['v2', 'Creep'],
        ['v2', 'Breed'],
      ]);
      expect((await queue.removeByIdentity('radiohead', 'creep', 'v1')).map((one) => one.requester)).toEqual(['v1', 'v1']);
      expect(await queue.remove(first.request.id)).toBeNull();
      expect((await queue.removeByIdentity('radiohead', 'creep')).map((one) => one.requester)).toEqual(['v2']);
      expect((await queue.clear()).map((one) => one.title)).toEqual(['Breed']);
      expect(await queue.list()).toEqual([]);
    });

    // Issue 54 M5: one requester filled the 1,000-request queue in 2.3 s. The attack, scaled by the bounds themselves.
    it('When one requester floods the queue, then past MAX_WAITING_PER_REQUESTER its requests are refused and others still get in', async () => {
      await open();
      const queue = opened().songRequests;
      const bounds = { dedupeSince: 0, windowSince: 0 };
      for (let index = 0; index < MAX_WAITING_PER_REQUESTER; index++) {
        expect((await queue.add(request('flood', 'Artist', `Song ${index}`, 1000 + index), bounds)).state).toBe('added');
      }
      expect(await queue.add(request('flood', 'Artist', 'One more', 2000), bounds)).toEqual({ state: 'requester-full' });
      expect((await queue.add(request('viewer', 'Artist', 'One more', 2001), bounds)).state).toBe('added');
      expect((await queue.list()).filter((one) => one.requester === 'flood')).toHaveLength(MAX_WAITING_PER_REQUESTER);
    });

    it('When made-up requesters flood the queue, then past MAX_REQUESTS_PER_WINDOW in the window they are refused; once the window has passed, one gets in', async () => {
      await open();
      const queue = opened().songRequests;
      const at = 10_000_000;
      for (let index = 0; index < MAX_REQUESTS_PER_WINDOW; index++) {
        const added = await queue.add(request(`bot-${index}`, 'Artist', 'Song', at + index), { dedupeSince: 0, windowSince: at - REQUEST_WINDOW_MS });
        expect(added.state).toBe('added');
      }
      const inWindow = { dedupeSince: 0, windowSince: at + MAX_REQUESTS_PER_WINDOW - REQUEST_WINDOW_MS };
      expect(await queue.add(request('bot-late', 'Artist', 'Song', at + MAX_REQUESTS_PER_WINDOW), inWindow)).toEqual({ state: 'window-full' });
      const later = at + REQUEST_WINDOW_MS + MAX_REQUESTS_PER_WINDOW;
      expect((await queue.add(request('bot-later', 'Artist', 'Song', later), { dedupeSince: 0, windowSince: later - REQUEST_WINDOW_MS })).state).toBe('added');
      expect(await queue.list()).toHaveLength(MAX_REQUESTS_PER_WINDOW + 1);
    });
  });

  describe('idempotency keys', () => {
    const LEASE = 60_000;
    it('When a key is claimed, then a repeat sees it pending, then answered, and after 24 h it is free again', async () => {
      await open();
      const keys = opened().idempotency;
      expect(await keys.claim('k', 'f1', 1000, LEASE)).toEqual({ state: 'new' });
      expect(await keys.claim('k', 'f2', 1001, LEASE)).toEqual({ state: 'pending', fingerprint: 'f1' });
      await keys.answer('k', 200, '{"dbid":1}');
      expect(await keys.claim('k', 'f1', 1002, LEASE)).toEqual({ state: 'answered', fingerprint: 'f1', status: 200, body: '{"dbid":1}' });
      expect(await keys.claim('k', 'f1', 1000 + IDEMPOTENCY_KEEP_MS + 1, LEASE)).toEqual({ state: 'new' });
    });

    it('When a first request fails or its instance dies, then the key is free for a retry; an answered key is never forgotten', async () => {
      await open();
      const keys = opened().idempotency;
      await keys.claim('failed', 'f', 1000, LEASE);
      await keys.forget('failed');
      expect(await keys.claim('failed', 'f', 1001, LEASE)).toEqual({ state: 'new' });
      expect(await keys.claim('died', 'f', 1000, LEASE)).toEqual({ state: 'new' });
      expect(await keys.claim('died', 'f', 1000 + LEASE + 1, LEASE)).toEqual({ state: 'new' });
      await keys.claim('done', 'f', 1000, LEASE);
      await keys.answer('done', 204, '');
      await keys.forget('done');
      expect(await keys.claim('done', 'f', 1000 + LEASE + 1, LEASE)).toMatchObject({ state: 'answered', status: 204 });
    });

    // Round three, N11 (docs/security.md "Idempotency keys"): 5,000 keys of large answers kept
    // 295 MiB for 24 h. Scaled down: bounds of 5 entries and 4,000 bytes.
    it('When more answers are kept than the bounds allow, then the oldest go first and both bounds hold', async () => {
      await open(1024 * 1024, { maxEntries: 5, maxBytes: 4000 });
      const keys = opened().idempotency;
      for (let index = 0; index < 10; index++) {
        await keys.claim(`big-${index}`, 'f', 200_000_000 + index, LEASE);
        await keys.answer(`big-${index}`, 200, 'x'.repeat(1000));
      }
      const big = await harness.backend().rows('SELECT key, length(body) AS bytes FROM idempotency_keys ORDER BY created_at');
      expect(big.map((row) => row.key)).toEqual(['big-7', 'big-8', 'big-9']);
      for (let index = 0; index < 10; index++) {
        await keys.claim(`small-${index}`, 'f', 300_000_000 + index, LEASE);
        await keys.answer(`small-${index}`, 200, '{}');
      }
      const small = await harness.backend().rows('SELECT key FROM idempotency_keys ORDER BY created_at');
      expect(small.map((row) => row.key)).toEqual(['small-5', 'small-6', 'small-7', 'small-8', 'small-9']);
    });

    // Issue 54 (Low): keyed submissions near the bounds paid a scan of every answer kept (42.7 ms
    // median against 3.9 ms). The trim reads the totals row and the oldest keys from an index.
    it('When keys are kept near the bounds, then the trim reads the totals by key and the oldest from the index, never the table, and the totals stay right', async () => {
      await open(1024 * 1024, { maxEntries: 500, maxBytes: 1024 * 1024 });
      const keys = opened().idempotency;
      for (let index = 0; index < 600; index++) {
        await keys.claim(`key-${index}`, 'f', 200_000_000 + index, LEASE);
        if (index % 3 > 0) await keys.answer(`key-${index}`, 200, 'x'.repeat(index));
      }
      await keys.forget('key-599');
      const totals = await harness.backend().rows(IDEMPOTENCY_TOTALS_SQL);
      const counted = await harness
        .backend()
        .rows('SELECT count(*) AS entries, sum(coalesce(length(body), 0) + length(key) + length(fingerprint) + 64) AS bytes FROM idempotency_keys');
      expect(totals.map((row) => [Number(row.entries), Number(row.bytes)])).toEqual(counted.map((row) => [Number(row.entries), Number(row.bytes)]));
      expect(Number(counted[0]?.entries)).toBeLessThanOrEqual(500);
      const oldest = await harness.backend().explain(oldestKeysSql(String(TRIM_BATCH)));
      // An index on created_at read in order (PostgreSQL may sort the ties of one created_at as it goes: an incremental sort).
      expect(oldest).toMatch(/USING (COVERING )?INDEX idempotency_keys_oldest|Index (Only )?Scan using idempotency_keys_(oldest|by_age)/);
      expect(oldest).not.toMatch(/Seq Scan on idempotency_keys|TEMP B-TREE|(^|-> {2})Sort /m);
      expect(await harness.backend().explain(IDEMPOTENCY_TOTALS_SQL)).toMatch(/INTEGER PRIMARY KEY|idempotency_totals_pkey|Seq Scan on idempotency_totals/);
    });

    // N8: the fingerprint key is random per database and the same every time it is read.
    it('When the fingerprint key is read, then it is 32 random bytes of this database, the same on every read', async () => {
      await open();
      const first = await opened().idempotency.fingerprintKey();
      expect(first).toHaveLength(32);
      expect((await opened().idempotency.fingerprintKey()).equals(first)).toBe(true);
      const rows = await harness.backend().rows("SELECT value FROM store_keys WHERE name = 'idempotency-fingerprint'");
      expect(Buffer.from(rows[0]?.value as Uint8Array).equals(first)).toBe(true);
    });
  });
}

describe('store contract: SQLite', () => {
  let temp: ReturnType<typeof makeTempDir>;
  let file = '';
  storeContract(() => ({
    setup: async () => {
      temp = makeTempDir();
    },
    teardown: async () => temp.cleanup(),
    backend: () => ({
      open: (options) => openStore(file, options),
      async rows(sql) {
        const db = openDatabase(file);
        try {
          return db.prepare(sql).all() as Record<string, unknown>[];
        } finally {
          db.close();
        }
      },
      async reset() {
        file = path.join(temp.dir, `svc-${Math.random().toString(36).slice(2)}.db`);
      },
      async explain(sql) {
        const db = openDatabase(file);
        try {
          return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((row) => row.detail).join('\n');
        } finally {
          db.close();
        }
      },
    }),
  }));

  it('When the database is a file path, then the SQLite backend is chosen', async () => {
    const file = path.join(temp.dir, 'kind.db');
    const store = await openStore(file, { maxImageBytes: 1000 });
    expect(fs.existsSync(file)).toBe(true);
    // The request rate shared through the database is PostgreSQL's alone.
    expect(store.requestSlots).toBeUndefined();
    await store.close();
  });
});

describeWithPostgres('store contract: PostgreSQL', () => {
  let database: TestDatabase;
  storeContract(() => ({
    setup: async () => {
      database = await createTestDatabase();
    },
    teardown: async () => database.drop(),
    backend: () => ({
      open: (options) => openStore(database.url, options),
      rows: (sql) => database.query(sql),
      async explain(sql) {
        await database.query('ANALYZE');
        return (await database.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`)).map((row) => row['QUERY PLAN']).join('\n');
      },
      async reset() {
        const tables = await database.query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'tracks'");
        if (Number(tables[0]?.n) === 0) return;
        await database.query(
          'TRUNCATE tracks, images, image_blobs, track_images, image_urls, lookup_cache, request_slots, output_messages, output_attempts, output_changes, output_cursors, song_requests CASCADE',
        );
      },
    }),
  }));

  it('When three instances start at once on an empty database, then the migrations run once and all three work', async () => {
    const fresh = await createTestDatabase();
    try {
      const stores = await Promise.all([1, 2, 3].map(() => openStore(fresh.url, { maxImageBytes: 1000 })));
      expect(stores.map((store) => store.requestSlots !== undefined)).toEqual([true, true, true]);
      expect((await fresh.query<{ version: number }>('SELECT version FROM svc_schema ORDER BY version')).map((row) => row.version)).toEqual(
        POSTGRES_MIGRATIONS.map((m) => m.version),
      );
      const stored = await Promise.all(
        stores.map(async (store, index) =>
          store.tracks.insert({ receivedSeq: await store.tracks.nextReceivedSeq(), receivedAt: 'x', metadata: { title: `t${index}` } }),
        ),
      );
      expect(new Set(stored.map((record) => record.dbid)).size).toBe(3);
      await Promise.all(stores.map((store) => store.close()));
    } finally {
      await fresh.drop();
    }
  });

  it('When two instances share the database, then a change through one is announced to the other, not to itself', async () => {
    const one = await openStore(database.url, { maxImageBytes: 1000 });
    const two = await openStore(database.url, { maxImageBytes: 1000 });
    try {
      const heardByTwo = new Promise((resolve) => two.events.once('change', resolve));
      const heardByOne = jest.fn();
      one.events.on('change', heardByOne);
      const record = await one.tracks.insert({ receivedSeq: await one.tracks.nextReceivedSeq(), receivedAt: 'x', metadata: { title: 'x' } });
      expect(await heardByTwo).toEqual({ kind: 'track', dbid: record.dbid });
      // Two's own change reaching one proves one listens; one's own never came back to it.
      const heardBack = new Promise((resolve) => one.events.once('change', resolve));
      await two.tracks.updateMetadata(record.dbid, { title: 'y' });
      expect(await heardBack).toEqual({ kind: 'track', dbid: record.dbid });
      expect(heardByOne).toHaveBeenCalledTimes(1);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('When two instances want the same service, then one gets the turn, the other waits for the interval, which starts again when the request really starts', async () => {
    const one = await openStore(database.url, { maxImageBytes: 1000 });
    const two = await openStore(database.url, { maxImageBytes: 1000 });
    try {
      const [slots, other] = [one.requestSlots, two.requestSlots];
      if (!slots || !other) throw new Error('PostgreSQL stores share request slots');
      const waits = await Promise.all([slots.tryAcquire('musicbrainz', 1000), other.tryAcquire('musicbrainz', 1000)]);
      // Exactly one took the turn; the other is told to come back within the interval.
      expect(waits.filter((wait) => wait === 0)).toHaveLength(1);
      const wait = Math.max(...waits);
      expect(wait).toBeGreaterThan(800);
      expect(wait).toBeLessThanOrEqual(1000);
      // Another service has its own turn.
      expect(await other.tryAcquire('acoustid', 344)).toBe(0);
      // A request that starts late pushes the next turn a full interval past its real start.
      await slots.started('musicbrainz', 5000);
      expect(await other.tryAcquire('musicbrainz', 1000)).toBeGreaterThan(4000);
    } finally {
      await one.close();
      await two.close();
    }
  });
});
