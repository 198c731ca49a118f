import { BoundedMap } from '../domain/bounded-map';
import { SharedFlights } from '../signals';
import { TOUCH_INTERVAL_MS, type ImageStore, type StoredImage } from './images';

// Covers from memory (docs/several-instances.md "Covers from memory"): after a track change every
// overlay fetches the new cover at once. An image key is the SHA-256 of its bytes, so the bytes
// of a key never change and a copy in memory never goes stale. This cache sits above either
// backend: image bytes by key, least recently used out first past `maxBytes`, and concurrent
// misses for one key share one store read. A burst of 1,000 fetches costs one read per instance.

interface Entry extends StoredImage {
  bytes: Buffer;
  /** When the store was last told this image is used (its own LRU, for eviction from the store). */
  touchedAt: number;
}

/** An image whose bytes are in memory. */
export type CachedImage = StoredImage & { readonly bytes: Buffer };

/**
 * The cache's own reads, for the /cover/<key> fast path (server/fast-paths/cover-fast-path.ts): `cached` is
 * a map lookup (null when the cache is off or does not hold the key), `load` the shared store read
 * of a miss; both mark the image as used in the store as `use` does.
 */
export interface MemoryCachedImages {
  readonly enabled: boolean;
  cached(key: string): CachedImage | undefined;
  load(key: string): Promise<CachedImage | null>;
}

export type MemoryCachedImageStore = ImageStore & { readonly memory: MemoryCachedImages };

/**
 * The image store with reads of image bytes served from memory. `maxBytes` 0 turns it off. An
 * image larger than the whole budget is never kept; its readers go to the store as before.
 */
export function withMemoryCache(store: ImageStore, maxBytes: number, now: () => number = Date.now): MemoryCachedImageStore {
  const entries = new BoundedMap<string, Entry>({ maxWeight: maxBytes, weigh: (entry) => entry.size, order: 'use' });

  const hit = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (!entry) return undefined;
    // The store still learns the image is in use (at most once per interval, as its own reads do),
    // so its eviction does not take a cover every overlay shows; a failure only costs that mark.
    const at = now();
    if (at - entry.touchedAt >= TOUCH_INTERVAL_MS) {
      entry.touchedAt = at;
      store.use(key).catch(() => undefined);
    }
    return entry;
  };

  const keep = (entry: Entry) => {
    if (entry.size > maxBytes || entries.has(entry.key)) return;
    entries.set(entry.key, entry);
  };

  // One store read per key at a time: whoever asks for the same key meanwhile waits for it.
  const loads = new SharedFlights<Entry | null>();
  const load = (key: string) =>
    loads.run(key, async () => {
      const image = await store.get(key);
      if (!image) return null;
      const entry: Entry = { key: image.key, mimeType: image.mimeType, size: image.size, bytes: image.bytes, touchedAt: now() };
      keep(entry);
      return entry;
    });

  const metaOf = (entry: Entry): StoredImage => ({ key: entry.key, mimeType: entry.mimeType, size: entry.size });

  // Concurrent metadata misses (every /wsstream reader of a new cover) share one read too.
  const metaReads = new SharedFlights<StoredImage | null>();
  const readMeta = (key: string) => metaReads.run(key, () => store.meta(key));

  if (maxBytes <= 0) return { ...bindAll(store), memory: { enabled: false, cached: () => undefined, load: () => Promise.resolve(null) } };
  return {
    ...bindAll(store),
    // An image the cache did not keep (larger than all of it) is not handed out from memory.
    memory: { enabled: true, cached: hit, load: async (key) => ((await load(key)) && entries.get(key)) ?? null },
    async get(key) {
      const entry = hit(key) ?? (await load(key));
      return entry ? { ...metaOf(entry), bytes: entry.bytes } : null;
    },
    async use(key) {
      const entry = hit(key) ?? (await load(key));
      return entry ? metaOf(entry) : null;
    },
    async meta(key) {
      const entry = hit(key);
      return entry ? metaOf(entry) : readMeta(key);
    },
    async slice(key, offset, length) {
      // A reply starts at offset 0: that read brings the whole image in for every later piece.
      const entry = hit(key) ?? (offset === 0 ? await load(key) : undefined);
      if (entry) return entry.bytes.subarray(offset, offset + length);
      return store.slice(key, offset, length);
    },
  };
}

/** Every method of the store, bound to it, so the cache can replace some and pass the others on. */
function bindAll(store: ImageStore): ImageStore {
  return {
    put: (bytes) => store.put(bytes),
    get: (key) => store.get(key),
    meta: (key) => store.meta(key),
    use: (key) => store.use(key),
    slice: (key, offset, length) => store.slice(key, offset, length),
    link: (links) => store.link(links),
    imagesOf: (dbid) => store.imagesOf(dbid),
    find: (query) => store.find(query),
    newestOfArtist: (artistKey, albumKey) => store.newestOfArtist(artistKey, albumKey),
    keyForUrl: (url) => store.keyForUrl(url),
    rememberUrl: (url, key) => store.rememberUrl(url, key),
  };
}
