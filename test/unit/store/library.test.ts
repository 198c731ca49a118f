import path from 'node:path';
import { openStore } from '../../../src/store/open-store';
import type { Store } from '../../../src/store/store';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { makeTempDir } from '../../helpers/temp-dir';

// The recognition library's store (src/store/library.ts), one suite on both backends: rows by
// path, fingerprints back item for item, removal by id and by folder.

function libraryContract(open: () => Promise<Store>): void {
  let store: Store;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(() => store.close());

  const track = (file: string, items: number[], title = 'T') => ({
    path: file,
    size: 1000,
    mtimeMs: 1_700_000_000_123,
    durationSeconds: 12.5,
    tags: { artist: 'A', title },
    fingerprint: Uint32Array.from(items),
  });

  test('a track comes back with its tags and its fingerprint item for item', async () => {
    const items = [0, 1, 0xffffffff, 0x80000000, 123456789];
    const entry = await store.library.put(track('/music/a.ogg', items));
    expect(entry).toMatchObject({
      path: '/music/a.ogg',
      size: 1000,
      mtimeMs: 1_700_000_000_123,
      durationSeconds: 12.5,
      items: 5,
      tags: { artist: 'A', title: 'T' },
    });
    const [stored] = await store.library.fingerprints();
    expect(Array.from(stored?.fingerprint ?? [])).toEqual(items);
    expect(stored?.id).toBe(entry.id);
    expect(await store.library.count()).toBe(1);
  });

  test('the same path again replaces its row (a changed file), keeping one', async () => {
    await store.library.put(track('/music/a.ogg', [1, 2, 3]));
    await store.library.put({ ...track('/music/a.ogg', [4, 5], 'New'), size: 2000 });
    const list = await store.library.list();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ size: 2000, items: 2, tags: { title: 'New' } });
    expect((await store.library.stamps()).get('/music/a.ogg')).toEqual({ size: 2000, mtimeMs: 1_700_000_000_123 });
  });

  test('removal by id, and by folder (its files only, LIKE characters taken literally)', async () => {
    const a = await store.library.put(track('/music/x_y/a.ogg', [1]));
    await store.library.put(track('/music/x_y/sub/b.ogg', [2]));
    await store.library.put(track('/music/xzy/c.ogg', [3]));
    const d = await store.library.put(track('/music/x_y2.ogg', [4]));
    expect(await store.library.remove({ id: a.id })).toEqual([a.id]);
    expect(await store.library.remove({ id: a.id })).toEqual([]);
    expect(await store.library.remove({ path: '/music/x_y' })).toHaveLength(1);
    expect((await store.library.list()).map((entry) => path.basename(entry.path)).sort()).toEqual(['c.ogg', 'x_y2.ogg']);
    expect(await store.library.remove({ path: '/music/x_y2.ogg' })).toEqual([d.id]);
  });
}

describe('library store: SQLite', () => {
  const temp = makeTempDir('svc-library-');
  let n = 0;
  afterAll(() => temp.cleanup());
  libraryContract(() => openStore(path.join(temp.dir, `library-${n++}.db`), { maxImageBytes: 1000 }));
});

describeWithPostgres('library store: PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  libraryContract(async () => {
    const store = await openStore(database.url, { maxImageBytes: 1000 });
    await database.query('DELETE FROM library_tracks');
    return store;
  });
});
