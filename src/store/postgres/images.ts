import type pg from 'pg';
import type { ImageMimeType } from '../../domain/image';
import type { ImageCategory } from '../../domain/track';
import { TOUCH_INTERVAL_MS, admitImage, sha256, type ImageStore, type NewLink, type StoredImage } from '../images';
import { inTransaction, type PostgresContext } from './connection';
import { notifyChange } from './notifications';

// The PostgreSQL side of ImageStore: one LRU budget for every instance sharing the database,
// so image writes take one advisory lock; links are announced to the other instances.

/** Advisory lock that serializes image writes (the LRU budget is one sum for every instance). */
const IMAGE_LOCK = 0x5356_4302;

interface ImageRow {
  key: string;
  mime_type: ImageMimeType;
  size: number;
}

export function createPostgresImageStore(context: PostgresContext, maxImageBytes: number): ImageStore {
  const { pool, now } = context;
  /**
   * Runs `select` (the image key is $1, its own values follow from $4) and marks the image as used
   * in the same round trip, at most once per TOUCH_INTERVAL_MS as SQLite's store does.
   */
  const readAndTouch = <R extends pg.QueryResultRow>(select: string, key: string, values: unknown[] = []) => {
    const at = now();
    return pool.query<R>(`WITH touched AS (UPDATE images SET last_used = $2 WHERE key = $1 AND last_used < $3) ${select}`, [
      key,
      at,
      at - TOUCH_INTERVAL_MS,
      ...values,
    ]);
  };

  return {
    put: (bytes) => putImage(context, maxImageBytes, bytes),
    async get(key) {
      const result = await readAndTouch<ImageRow & { bytes: Buffer }>(
        'SELECT i.key, i.mime_type, i.size, b.bytes FROM images i JOIN image_blobs b ON b.key = i.key WHERE i.key = $1',
        key,
      );
      const row = result.rows[0];
      return row ? { ...fromImageRow(row), bytes: row.bytes } : null;
    },
    async meta(key) {
      const result = await pool.query<ImageRow>('SELECT key, mime_type, size FROM images WHERE key = $1', [key]);
      return result.rows[0] ? fromImageRow(result.rows[0]) : null;
    },
    async use(key) {
      const result = await readAndTouch<ImageRow>('SELECT key, mime_type, size FROM images WHERE key = $1', key);
      return result.rows[0] ? fromImageRow(result.rows[0]) : null;
    },
    async slice(key, offset, length) {
      // substring() of an uncompressed (EXTERNAL) bytea reads only the chunks it needs.
      const result =
        offset === 0
          ? await readAndTouch<{ part: Buffer }>('SELECT substring(bytes FROM 1 FOR $4) AS part FROM image_blobs WHERE key = $1', key, [length])
          : await pool.query<{ part: Buffer }>('SELECT substring(bytes FROM $2 FOR $3) AS part FROM image_blobs WHERE key = $1', [key, offset + 1, length]);
      return result.rows[0]?.part ?? null;
    },
    link: (links) => linkImages(context, links),
    async imagesOf(dbid) {
      const result = await pool.query<ImageRow & { dbid: string; category: ImageCategory; source: string }>(
        `SELECT l.dbid, l.category, l.source, i.key, i.mime_type, i.size
           FROM track_images l JOIN images i ON i.key = l.image_key
          WHERE l.dbid = $1 ORDER BY l.id`,
        [dbid],
      );
      return result.rows.map((row) => ({ ...fromImageRow(row), dbid: Number(row.dbid), category: row.category, source: row.source }));
    },
    async find(query) {
      const result =
        query.albumKey === undefined
          ? await pool.query<ImageRow>(
              `SELECT i.key, i.mime_type, i.size FROM track_images l JOIN images i ON i.key = l.image_key
              WHERE l.artist_key = $1 AND l.category = $2 GROUP BY i.key ORDER BY max(l.id) DESC`,
              [query.artistKey, query.category],
            )
          : await pool.query<ImageRow>(
              `SELECT i.key, i.mime_type, i.size FROM track_images l JOIN images i ON i.key = l.image_key
              WHERE l.artist_key = $1 AND l.album_key = $2 AND l.category = $3 GROUP BY i.key ORDER BY max(l.id) DESC`,
              [query.artistKey, query.albumKey, query.category],
            );
      return result.rows.map(fromImageRow);
    },
    async newestOfArtist(artistKey, albumKey) {
      // DISTINCT ON keeps each category's newest link: the image find() would answer first.
      const result = await pool.query<ImageRow & { category: ImageCategory }>(
        `SELECT DISTINCT ON (l.category) l.category, i.key, i.mime_type, i.size FROM track_images l JOIN images i ON i.key = l.image_key
          WHERE l.artist_key = $1 AND (l.category <> 'cover' OR l.album_key = $2) ORDER BY l.category, l.id DESC`,
        [artistKey, albumKey],
      );
      const found: Partial<Record<ImageCategory, StoredImage>> = {};
      for (const row of result.rows) if (row.category !== 'cover' || albumKey !== '') found[row.category] = fromImageRow(row);
      return found;
    },
    async keyForUrl(url) {
      const result = await pool.query<{ image_key: string }>('SELECT image_key FROM image_urls WHERE url_sha256 = $1', [sha256(url)]);
      return result.rows[0]?.image_key ?? null;
    },
    async rememberUrl(url, key) {
      await pool.query(
        `INSERT INTO image_urls (url_sha256, image_key, fetched_at) SELECT $1, key, $3 FROM images WHERE key = $2
         ON CONFLICT (url_sha256) DO UPDATE SET image_key = EXCLUDED.image_key, fetched_at = EXCLUDED.fetched_at`,
        [sha256(url), key, now()],
      );
    },
  };
}

/** Stores the image (if new) and evicts the least recently used others until all fit the budget. */
async function putImage({ pool, now }: PostgresContext, maxImageBytes: number, bytes: Buffer): Promise<StoredImage> {
  const { key, mimeType } = admitImage(bytes, maxImageBytes);
  const at = now();
  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [IMAGE_LOCK]);
    const inserted = await client.query(
      'INSERT INTO images (key, mime_type, size, last_used) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO UPDATE SET last_used = GREATEST(images.last_used, EXCLUDED.last_used) RETURNING (xmax = 0) AS new',
      [key, mimeType, bytes.length, at],
    );
    if (!(inserted.rows[0] as { new: boolean } | undefined)?.new) return;
    await client.query('INSERT INTO image_blobs (key, bytes) VALUES ($1, $2)', [key, bytes]);
    // Least recently used first, until the others fit the budget with this one.
    await client.query(
      `DELETE FROM images WHERE key IN (
         SELECT key FROM (
           SELECT key, sum(size) OVER (ORDER BY last_used DESC, seq DESC) AS kept
             FROM images WHERE key <> $1
         ) ranked WHERE kept > $2
       )`,
      [key, maxImageBytes - bytes.length],
    );
  });
  return { key, mimeType, size: bytes.length };
}

/** Links images to records in one transaction, announcing each new link to the other instances. */
async function linkImages({ pool, now, instanceId }: PostgresContext, links: readonly NewLink[]): Promise<NewLink[]> {
  if (links.length === 0) return [];
  return inTransaction(pool, async (client) => {
    const at = now();
    const added: NewLink[] = [];
    for (const entry of links) {
      // An image evicted since the caller looked is skipped, not a foreign-key failure.
      const touched = await client.query('UPDATE images SET last_used = GREATEST(last_used, $1) WHERE key = $2', [at, entry.key]);
      if (!touched.rowCount) continue;
      const inserted = await client.query(
        `INSERT INTO track_images (dbid, category, image_key, artist_key, album_key, source) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (dbid, category, image_key) DO NOTHING`,
        [entry.dbid, entry.category, entry.key, entry.artistKey, entry.albumKey, entry.source],
      );
      if (!inserted.rowCount) continue;
      added.push(entry);
      await notifyChange(client, instanceId, { kind: 'image', dbid: entry.dbid, key: entry.key, category: entry.category });
    }
    return added;
  });
}

function fromImageRow(row: ImageRow): StoredImage {
  return { key: row.key, mimeType: row.mime_type, size: Number(row.size) };
}
