import path from 'node:path';
import { withMemoryCache } from '../../../src/store/image-memory-cache';
import type { ImageStore } from '../../../src/store/images';
import { openStore } from '../../../src/store/open-store';
import type { Store } from '../../../src/store/store';
import { makePng } from '../../helpers/images';
import { createTestDatabase, postgresForPart, type TestDatabase } from '../../helpers/postgres';
import { makeTempDir } from '../../helpers/temp-dir';

// Covers from memory, on both backends: the cache sits above the real store, and the store's
// reads are counted by wrapping its methods.

const png = (shade: number) => makePng(40, 40, [shade, 0, 0], [0, 0, shade]);

/** The store with a count of its reads of image bytes or metadata. */
function counted(store: ImageStore): { store: ImageStore; reads: () => number } {
  let reads = 0;
  const count =
    <A extends unknown[], R>(method: (...args: A) => Promise<R>) =>
    (...args: A) => {
      reads += 1;
      return method(...args);
    };
  return {
    store: { ...store, get: count(store.get), use: count(store.use), meta: count(store.meta), slice: count(store.slice) },
    reads: () => reads,
  };
}

const backends: [string, () => Promise<{ store: Store; done: () => Promise<void> }>][] = [
  [
    'SQLite',
    async () => {
      const temp = makeTempDir();
      const store = await openStore(path.join(temp.dir, 'svc.db'), { maxImageBytes: 64 * 1024 * 1024 });
      return { store, done: async () => (await store.close(), temp.cleanup()) };
    },
  ],
];
if (postgresForPart('image memory cache on PostgreSQL')) {
  backends.push([
    'PostgreSQL',
    async () => {
      const database: TestDatabase = await createTestDatabase();
      const store = await openStore(database.url, { maxImageBytes: 64 * 1024 * 1024 });
      return { store, done: async () => (await store.close(), await database.drop()) };
    },
  ]);
}

describe.each(backends)('image memory cache on %s', (_name, openBackend) => {
  let opened: { store: Store; done: () => Promise<void> };
  beforeEach(async () => {
    opened = await openBackend();
  });
  afterEach(() => opened.done());

  it('When 200 readers ask at once for an image not yet in memory, then the store is read once and every reader gets the same bytes', async () => {
    const bytes = png(200);
    const { key } = await opened.store.images.put(bytes);
    const { store, reads } = counted(opened.store.images);
    const cache = withMemoryCache(store, 1024 * 1024);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? cache.get(key) : cache.use(key))));
    expect(reads()).toBe(1);
    expect(answers.every((answer) => answer?.key === key && answer.size === bytes.length)).toBe(true);
    expect((await cache.get(key))?.bytes.equals(bytes)).toBe(true);
    expect((await cache.slice(key, 10, 20))?.equals(bytes.subarray(10, 30))).toBe(true);
    expect(reads()).toBe(1);
  });

  it('When the images held pass the budget, then the least recently used goes first and is read from the store again', async () => {
    const [a, b, c] = await Promise.all([png(10), png(20), png(30)].map((bytes) => opened.store.images.put(bytes)));
    if (!a || !b || !c) throw new Error('not stored');
    const { store, reads } = counted(opened.store.images);
    // Room for two of the three.
    const cache = withMemoryCache(store, a.size + b.size + Math.min(a.size, b.size, c.size) - 1);
    await cache.get(a.key);
    await cache.get(b.key);
    await cache.get(a.key); // a is now the most recently used
    await cache.get(c.key); // b goes
    expect(reads()).toBe(3);
    await cache.get(a.key);
    await cache.get(c.key);
    expect(reads()).toBe(3);
    await cache.get(b.key);
    expect(reads()).toBe(4);
  });

  it('When the budget is 0 or an image is unknown, then every read goes to the store and a missing image is null', async () => {
    const { key } = await opened.store.images.put(png(90));
    const { store, reads } = counted(opened.store.images);
    const off = withMemoryCache(store, 0);
    await off.get(key);
    await off.get(key);
    expect(reads()).toBe(2);
    const on = withMemoryCache(store, 1024 * 1024);
    expect(await on.get('0'.repeat(64))).toBeNull();
    expect(await on.use('0'.repeat(64))).toBeNull();
    // Nothing was kept for the unknown key: asking again asks the store again.
    expect(await on.get('0'.repeat(64))).toBeNull();
    expect(reads()).toBe(5);
  });
  it('When the /cover/<key> fast path asks the cache itself, then a miss is one shared read, a hit no read, and an image the cache cannot keep is not handed out', async () => {
    const small = png(120);
    const { key } = await opened.store.images.put(small);
    const { store, reads } = counted(opened.store.images);
    const cache = withMemoryCache(store, small.length);
    expect(cache.memory.enabled).toBe(true);
    expect(cache.memory.cached(key)).toBeUndefined();
    const loaded = await Promise.all(Array.from({ length: 50 }, () => cache.memory.load(key)));
    expect(reads()).toBe(1);
    expect(loaded.every((image) => image?.bytes.equals(small))).toBe(true);
    expect(cache.memory.cached(key)?.bytes).toBe(loaded[0]?.bytes);
    expect(reads()).toBe(1);

    const { key: bigger } = await opened.store.images.put(Buffer.concat([png(121), Buffer.alloc(small.length)]));
    expect(await cache.memory.load(bigger)).toBeNull();
    expect(await cache.memory.load('0'.repeat(64))).toBeNull();
    const off = withMemoryCache(store, 0);
    expect(off.memory.enabled).toBe(false);
    expect(off.memory.cached(key)).toBeUndefined();
    expect(await off.memory.load(key)).toBeNull();
  });
});
