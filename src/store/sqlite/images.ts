/* eslint-disable @typescript-eslint/require-await -- synchronous better-sqlite3 behind the asynchronous store interface: `async` turns a throw into the rejection the interface promises */
import { IMAGE_CATEGORIES, type ImageCategory } from '../../domain/track';
import { type ImageMimeType } from '../../domain/image';
import { BoundedMap } from '../../domain/bounded-map';
import type { Db } from './database';
import { ImageStore, ImageStoreOptions, NewLink, StoredImage, TOUCH_INTERVAL_MS, admitImage, sha256 } from '../images';

/**
 * Images being read piece by piece (slice) are kept here, least recently read out first: SQLite
 * reads a whole BLOB to take a piece of it, so reading from a copy keeps each piece cheap, and
 * the bound keeps memory flat however many readers there are.
 */
const SLICE_CACHE_BYTES = 24 * 1024 * 1024;
interface ImageRow {
  key: string;
  mime_type: ImageMimeType;
  size: number;
}

export function createImageStore(db: Db, options: ImageStoreOptions): ImageStore {
  const now = options.now ?? Date.now;
  const sql = prepareImageStatements(db);
  const wholeForSlicing = sliceCache((key) => sql.blob.get(key)?.bytes);
  const markUsed = (key: string) => {
    const at = now();
    sql.touch.run(at, key, at - TOUCH_INTERVAL_MS);
  };
  const put = putTransaction(db, sql, options.maxTotalBytes, now);
  const link = linkTransaction(db, sql, now);

  return {
    put: async (bytes) => put(bytes),
    async get(key) {
      const row = sql.meta.get(key);
      const data = row && sql.blob.get(key);
      if (!row || !data) return null;
      markUsed(key);
      return { ...fromRow(row), bytes: data.bytes };
    },
    async meta(key) {
      const row = sql.meta.get(key);
      return row ? fromRow(row) : null;
    },
    async use(key) {
      const row = sql.meta.get(key);
      if (!row) return null;
      markUsed(key);
      return fromRow(row);
    },
    async slice(key, offset, length) {
      const bytes = wholeForSlicing(key);
      if (!bytes) return null;
      if (offset === 0) markUsed(key);
      return bytes.subarray(offset, offset + length);
    },
    link: async (links) => link(links),
    async imagesOf(dbid) {
      return sql.linksOf.all(dbid).map((row) => ({ ...fromRow(row), dbid: row.dbid, category: row.category, source: row.source }));
    },
    async find(query) {
      const rows =
        query.albumKey === undefined ? sql.byArtist.all(query.artistKey, query.category) : sql.byAlbum.all(query.artistKey, query.albumKey, query.category);
      return rows.map(fromRow);
    },
    async newestOfArtist(artistKey, albumKey) {
      const found: Partial<Record<ImageCategory, StoredImage>> = {};
      for (const category of IMAGE_CATEGORIES) {
        if (category === 'cover' && albumKey === '') continue;
        const row = category === 'cover' ? sql.byAlbum.get(artistKey, albumKey, category) : sql.byArtist.get(artistKey, category);
        if (row) found[category] = fromRow(row);
      }
      return found;
    },
    async keyForUrl(url) {
      return sql.urlKey.get(sha256(url))?.image_key ?? null;
    },
    async rememberUrl(url, key) {
      sql.rememberUrl.run(sha256(url), key, now());
    },
  };
}

type ImageStatements = ReturnType<typeof prepareImageStatements>;

/** Every statement of the image store, prepared once when it opens. */
function prepareImageStatements(db: Db) {
  return {
    insertImage: db.prepare<[string, string, number, string, number], never>(
      'INSERT INTO images (key, mime_type, size, stored_at, last_used) VALUES (?, ?, ?, ?, ?)',
    ),
    insertBlob: db.prepare<[string, Buffer], never>('INSERT INTO image_blobs (key, bytes) VALUES (?, ?)'),
    touch: db.prepare<[number, string, number], never>('UPDATE images SET last_used = ? WHERE key = ? AND last_used < ?'),
    meta: db.prepare<[string], ImageRow>('SELECT key, mime_type, size FROM images WHERE key = ?'),
    blob: db.prepare<[string], { bytes: Buffer }>('SELECT bytes FROM image_blobs WHERE key = ?'),
    total: db.prepare<[], { total: number | null }>('SELECT sum(size) AS total FROM images'),
    oldest: db.prepare<[string], { key: string; size: number }>('SELECT key, size FROM images WHERE key <> ? ORDER BY last_used, rowid LIMIT 32'),
    remove: db.prepare<[string], never>('DELETE FROM images WHERE key = ?'),
    insertLink: db.prepare<[number, string, string, string, string, string], never>(
      'INSERT OR IGNORE INTO track_images (dbid, category, image_key, artist_key, album_key, source) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    linksOf: db.prepare<[number], ImageRow & { dbid: number; category: ImageCategory; source: string }>(
      `SELECT l.dbid, l.category, l.source, i.key, i.mime_type, i.size
         FROM track_images l JOIN images i ON i.key = l.image_key
        WHERE l.dbid = ? ORDER BY l.id`,
    ),
    byArtist: db.prepare<[string, string], ImageRow>(
      `SELECT i.key, i.mime_type, i.size FROM track_images l JOIN images i ON i.key = l.image_key
        WHERE l.artist_key = ? AND l.category = ? GROUP BY i.key ORDER BY max(l.id) DESC`,
    ),
    byAlbum: db.prepare<[string, string, string], ImageRow>(
      `SELECT i.key, i.mime_type, i.size FROM track_images l JOIN images i ON i.key = l.image_key
        WHERE l.artist_key = ? AND l.album_key = ? AND l.category = ? GROUP BY i.key ORDER BY max(l.id) DESC`,
    ),
    urlKey: db.prepare<[string], { image_key: string }>('SELECT image_key FROM image_urls WHERE url_sha256 = ?'),
    rememberUrl: db.prepare<[string, string, number], never>(
      `INSERT INTO image_urls (url_sha256, image_key, fetched_at) VALUES (?, ?, ?)
       ON CONFLICT (url_sha256) DO UPDATE SET image_key = excluded.image_key, fetched_at = excluded.fetched_at`,
    ),
  };
}

/**
 * Whole images for slicing, least recently read out first past SLICE_CACHE_BYTES (the newest
 * is kept even if larger); `read` loads one from the database.
 */
function sliceCache(read: (key: string) => Buffer | undefined): (key: string) => Buffer | null {
  const cache = new BoundedMap<string, Buffer>({ maxWeight: SLICE_CACHE_BYTES, weigh: (bytes) => bytes.length, order: 'use' });
  return (key) => {
    const cached = cache.get(key);
    if (cached) return cached;
    const bytes = read(key);
    if (!bytes) return null;
    cache.set(key, bytes);
    return bytes;
  };
}

/** Stores the bytes unless present, then evicts the least recently used others past the bound: one transaction. */
function putTransaction(db: Db, sql: ImageStatements, maxTotalBytes: number, now: () => number) {
  const evictBeyondBound = (keep: string) => {
    let size = sql.total.get()?.total ?? 0;
    while (size > maxTotalBytes) {
      const victims = sql.oldest.all(keep);
      if (victims.length === 0) return;
      for (const victim of victims) {
        if (size <= maxTotalBytes) return;
        // Cascades to the blob, the track links and remembered URLs.
        sql.remove.run(victim.key);
        size -= victim.size;
      }
    }
  };
  return db.transaction((bytes: Buffer): StoredImage => {
    const { key, mimeType } = admitImage(bytes, maxTotalBytes);
    const at = now();
    if (sql.meta.get(key)) {
      sql.touch.run(at, key, at);
    } else {
      sql.insertImage.run(key, mimeType, bytes.length, new Date(at).toISOString(), at);
      sql.insertBlob.run(key, bytes);
      evictBeyondBound(key);
    }
    return { key, mimeType, size: bytes.length };
  });
}

/** Links stored images to tracks in one transaction; answers the links that are new. */
function linkTransaction(db: Db, sql: ImageStatements, now: () => number) {
  return db.transaction((links: readonly NewLink[]): NewLink[] => {
    const at = now();
    return links.filter((entry) => {
      // An image evicted since the caller looked is skipped, not a foreign-key failure.
      if (!sql.meta.get(entry.key)) return false;
      sql.touch.run(at, entry.key, at - TOUCH_INTERVAL_MS);
      return sql.insertLink.run(entry.dbid, entry.category, entry.key, entry.artistKey, entry.albumKey, entry.source).changes > 0;
    });
  });
}

function fromRow(row: ImageRow): StoredImage {
  return { key: row.key, mimeType: row.mime_type, size: row.size };
}
