// The recognition library (docs/recognition.md "The library"): the contract and the row rules both
// backends share; the bodies are sqlite/library.ts and postgres/library.ts. One row per audio
// file: where it is, the size and modification time it had when it was read (an unchanged file is
// not read twice), its tags and its whole Chromaprint fingerprint.

/** The tags kept with a library track, named as svc's track fields are (docs/recognition.md). */
export const LIBRARY_TAGS = ['artist', 'title', 'album', 'isrc', 'label', 'musicbrainzrecordingid', 'musicbrainzartistid', 'musicbrainzalbumid'] as const;
export type LibraryTag = (typeof LIBRARY_TAGS)[number];
export type LibraryTags = Partial<Record<LibraryTag, string>>;

export interface NewLibraryTrack {
  path: string;
  size: number;
  mtimeMs: number;
  durationSeconds: number;
  tags: LibraryTags;
  /** Chromaprint's raw items (fpcalc -raw), unsigned 32-bit. */
  fingerprint: Uint32Array;
}

/** A library track without its fingerprint (what lists and status show). */
export interface LibraryEntry {
  id: number;
  path: string;
  size: number;
  mtimeMs: number;
  durationSeconds: number;
  tags: LibraryTags;
  /** Fingerprint items (about 8 a second). */
  items: number;
  addedAt: string;
}

export interface LibraryFingerprint {
  id: number;
  tags: LibraryTags;
  fingerprint: Uint32Array;
}

export interface LibraryStore {
  /** Adds a file, or replaces the row of the same path. */
  put(track: NewLibraryTrack): Promise<LibraryEntry>;
  /** Size and modification time of every stored path (what makes adding incremental). */
  stamps(): Promise<Map<string, { size: number; mtimeMs: number }>>;
  /** Every track, by id. */
  list(): Promise<LibraryEntry[]>;
  /** Every track with its fingerprint, by id (what the matcher indexes). */
  fingerprints(): Promise<LibraryFingerprint[]>;
  /** Removes the track of this id, or every track whose path is `path` or lies under it; answers the removed ids. */
  remove(selector: { id: number } | { path: string }): Promise<number[]>;
  count(): Promise<number>;
}

export interface LibraryRow {
  id: number | string;
  path: string;
  size: number | string;
  mtime_ms: number | string;
  duration_seconds: number | string;
  tags: string;
  items: number | string;
  added_at: number | string;
}

export const LIBRARY_COLUMNS = 'id, path, size, mtime_ms, duration_seconds, tags, items, added_at';

export function entryOf(row: LibraryRow): LibraryEntry {
  return {
    id: Number(row.id),
    path: row.path,
    size: Number(row.size),
    mtimeMs: Number(row.mtime_ms),
    durationSeconds: Number(row.duration_seconds),
    tags: tagsOf(row.tags),
    items: Number(row.items),
    addedAt: new Date(Number(row.added_at)).toISOString(),
  };
}

/** The stored tags' JSON as tags: only known names with text values survive. */
export function tagsOf(json: string): LibraryTags {
  const parsed: unknown = JSON.parse(json);
  const tags: LibraryTags = {};
  if (typeof parsed !== 'object' || parsed === null) return tags;
  for (const name of LIBRARY_TAGS) {
    const value = (parsed as Record<string, unknown>)[name];
    if (typeof value === 'string' && value !== '') tags[name] = value;
  }
  return tags;
}

/** A fingerprint as the bytes stored (little-endian 32-bit items), and back. */
export function fingerprintBytes(items: Uint32Array): Buffer {
  const bytes = Buffer.alloc(items.length * 4);
  items.forEach((item, i) => bytes.writeUInt32LE(item, i * 4));
  return bytes;
}

export function fingerprintOf(bytes: Uint8Array): Uint32Array {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const items = new Uint32Array(Math.floor(view.length / 4));
  for (let i = 0; i < items.length; i++) items[i] = view.readUInt32LE(i * 4);
  return items;
}

/** The LIKE pattern of the paths under a folder (`%` and `_` in the name taken literally, `\` as escape). */
export function underPattern(path: string): string {
  const folder = path.endsWith('/') ? path : `${path}/`;
  return `${folder.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
