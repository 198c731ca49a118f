import { createHash } from 'node:crypto';
import path from 'node:path';
import { openDatabase, type Db } from '../../../src/store/database';
import { ImageRejected, createImageStore, type ImageStore } from '../../../src/store/images';
import { createTrackStore, type TrackStore } from '../../../src/store/tracks';
import { MAGIC, fakeJpeg, makePng } from '../../helpers/images';
import { makeTempDir } from '../../helpers/temp-dir';

// The image store on a real SQLite file: content addressing, refusal, track links, lookups by
// name, remembered URLs, and least-recently-used eviction past the size bound.

describe('image store', () => {
  let temp: ReturnType<typeof makeTempDir>;
  let db: Db;
  let tracks: TrackStore;
  let clock: number;
  const open = (maxTotalBytes = 1024 * 1024): ImageStore => createImageStore(db, { maxTotalBytes, now: () => clock });

  beforeEach(() => {
    temp = makeTempDir();
    db = openDatabase(path.join(temp.dir, 'svc.db'));
    tracks = createTrackStore(db);
    clock = 1_000_000;
  });
  afterEach(() => {
    db.close();
    temp.cleanup();
  });

  const addTrack = (artist: string, album: string) =>
    tracks.insert({ receivedSeq: tracks.nextReceivedSeq(), receivedAt: new Date().toISOString(), metadata: { artist, album, title: 't' } });

  it('When the database opens, then the image tables are migration 2', () => {
    expect(db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(2);
    const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((row) => row.name);
    expect(tables).toEqual(expect.arrayContaining(['images', 'image_blobs', 'track_images', 'image_urls']));
  });

  it('When an image is stored, then its key is the SHA-256 of the bytes and the MIME type is sniffed', () => {
    const store = open();
    const png = makePng(4, 4, [255, 0, 0], [0, 0, 255]);
    const stored = store.put(png);
    expect(stored).toEqual({ key: createHash('sha256').update(png).digest('hex'), mimeType: 'image/png', size: png.length });
    expect(store.get(stored.key)?.bytes.equals(png)).toBe(true);
    expect(store.put(MAGIC.gif).mimeType).toBe('image/gif');
    expect(store.put(MAGIC.webp).mimeType).toBe('image/webp');
  });

  it('When an image is read in slices, then the slices join up to the bytes; an unknown key is null', () => {
    const store = open(32 * 1024 * 1024);
    const big = fakeJpeg(1_000_003, 5);
    const { key } = store.put(big);
    const parts: Buffer[] = [];
    for (let offset = 0; offset < big.length; offset += 65_536) parts.push(store.slice(key, offset, 65_536) as Buffer);
    expect(parts.at(-1)?.length).toBe(big.length % 65_536);
    expect(Buffer.concat(parts).equals(big)).toBe(true);
    expect(store.slice('0'.repeat(64), 0, 10)).toBeNull();
  });

  it('When the same bytes are stored twice, then there is one copy', () => {
    const store = open();
    const first = store.put(MAGIC.jpeg);
    const second = store.put(Buffer.from(MAGIC.jpeg));
    expect(second.key).toBe(first.key);
    expect(store.totalBytes()).toBe(MAGIC.jpeg.length);
  });

  it('When bytes are not an image or larger than 10 MiB, then they are refused and nothing is stored', () => {
    const store = open(64 * 1024 * 1024);
    expect(() => store.put(Buffer.from('<svg></svg> padding'))).toThrow(ImageRejected);
    expect(() => store.put(fakeJpeg(10 * 1024 * 1024 + 1, 1))).toThrow(/over the per-image limit/);
    expect(store.totalBytes()).toBe(0);
    expect(store.put(fakeJpeg(10 * 1024 * 1024, 2)).size).toBe(10 * 1024 * 1024);
  });

  it('When one image is larger than the whole configured store, then it is refused for that reason, not the 10 MiB one', () => {
    const store = open(1000);
    const refusal = (() => {
      try {
        store.put(fakeJpeg(4000, 3));
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refusal).toBeInstanceOf(ImageRejected);
    expect((refusal as ImageRejected).reason).toBe('over-budget');
    expect(store.totalBytes()).toBe(0);
  });

  it('When the total passes the bound, then the least recently used images are evicted with their links', () => {
    const store = open(3000);
    const track = addTrack('A', 'B');
    const keys = [1, 2, 3].map((seed) => {
      clock += 1000;
      return store.put(fakeJpeg(1000, seed)).key;
    });
    store.link([{ dbid: track.dbid, category: 'fanart', key: keys[0], artistKey: 'a', albumKey: 'b', source: 'test' }]);
    // Served long after it was stored: the first image is now the most recently used.
    clock += 120_000;
    expect(store.get(keys[0])).not.toBeNull();
    clock += 1000;
    const fourth = store.put(fakeJpeg(1000, 4)).key;
    expect(store.meta(keys[1])).toBeNull();
    expect(store.meta(keys[0])).not.toBeNull();
    expect(store.meta(keys[2])).not.toBeNull();
    expect(store.meta(fourth)).not.toBeNull();
    expect(store.totalBytes()).toBe(3000);

    clock += 1000;
    store.put(fakeJpeg(2500, 5));
    expect(store.totalBytes()).toBeLessThanOrEqual(3000);
    expect(store.imagesOf(track.dbid)).toEqual([]);
    expect(db.prepare('SELECT count(*) AS n FROM image_blobs').get()).toEqual({ n: 1 });
  });

  it('When one image is larger than the whole bound, then it is refused rather than emptying the store', () => {
    const store = open(1500);
    const kept = store.put(fakeJpeg(1000, 1)).key;
    expect(() => store.put(fakeJpeg(2000, 2))).toThrow(ImageRejected);
    expect(store.meta(kept)).not.toBeNull();
  });

  it('When images are linked to tracks, then they are listed per track in arrival order and found by artist or album', () => {
    const store = open();
    const first = addTrack('Björk', 'Homogenic');
    const second = addTrack('Björk', 'Post');
    const cover1 = store.put(fakeJpeg(100, 1)).key;
    const cover2 = store.put(fakeJpeg(100, 2)).key;
    const fanart = store.put(fakeJpeg(100, 3)).key;
    const link = (dbid: number, category: 'cover' | 'fanart', key: string, album: string) =>
      store.link([{ dbid, category, key, artistKey: 'bjork', albumKey: album, source: 'test' }]).length === 1;
    expect(link(first.dbid, 'cover', cover1, 'homogenic')).toBe(true);
    expect(link(first.dbid, 'fanart', fanart, 'homogenic')).toBe(true);
    expect(link(first.dbid, 'fanart', fanart, 'homogenic')).toBe(false);
    link(second.dbid, 'cover', cover2, 'post');
    link(second.dbid, 'fanart', fanart, 'post');

    expect(store.imagesOf(first.dbid).map((image) => [image.category, image.key])).toEqual([['cover', cover1], ['fanart', fanart]]);
    expect(store.find({ category: 'fanart', artistKey: 'bjork' }).map((image) => image.key)).toEqual([fanart]);
    expect(store.find({ category: 'cover', artistKey: 'bjork' }).map((image) => image.key)).toEqual([cover2, cover1]);
    expect(store.find({ category: 'cover', artistKey: 'bjork', albumKey: 'post' }).map((image) => image.key)).toEqual([cover2]);
    expect(store.find({ category: 'logo', artistKey: 'bjork' })).toEqual([]);
  });

  it('When a provider URL was downloaded before, then its image is remembered by a hash of the URL only', () => {
    const store = open();
    const key = store.put(fakeJpeg(100, 1)).key;
    store.rememberUrl('https://images.example/a.jpg?token=abc', key);
    expect(store.keyForUrl('https://images.example/a.jpg?token=abc')).toBe(key);
    expect(store.keyForUrl('https://images.example/b.jpg')).toBeNull();
    const rows = JSON.stringify(db.prepare('SELECT * FROM image_urls').all());
    expect(rows).not.toMatch(/token|images\.example/);
  });
});
