import { isHttpUrl } from '../domain/http-url';
import { asList, asMbid, asNumber, asObject, asText, asTexts, defined, readList } from './json-read';

// The parts of MusicBrainz WS/2 JSON answers svc reads, under their own names, and the pure
// decoders that keep only those parts (the cache stores decoded answers; decoding is idempotent).

export interface MbArtistCredit {
  name: string;
  joinphrase?: string;
  artist: { id: string; name: string };
}

export interface MbGenre {
  name: string;
  count?: number;
}

export interface MbReleaseGroup {
  id: string;
  title?: string;
  'primary-type'?: string;
  'secondary-types'?: string[];
  genres?: MbGenre[];
}

export interface MbLabelInfo {
  label: { id?: string; name: string };
  'catalog-number'?: string;
}

export interface MbRelease {
  id: string;
  title: string;
  status?: string;
  date?: string;
  'artist-credit'?: MbArtistCredit[];
  'release-group'?: MbReleaseGroup;
  'label-info'?: MbLabelInfo[];
  genres?: MbGenre[];
  /** UPC/EAN as printed. */
  barcode?: string;
}

/** An artist's part in a work (composer, lyricist, writer, ...): a `work-level-rels` relation. */
export interface MbWorkCredit {
  type: string;
  artist: { name: string };
}

/** The work a recording performs (`work-rels`), with its ISWCs and writers. */
export interface MbWork {
  id: string;
  title?: string;
  iswcs?: string[];
  relations?: MbWorkCredit[];
}

export interface MbRecording {
  id: string;
  title: string;
  /** Search relevance, 0-100 (search answers only). */
  score?: number;
  'first-release-date'?: string;
  'artist-credit'?: MbArtistCredit[];
  releases?: MbRelease[];
  isrcs?: string[];
  genres?: MbGenre[];
  /** The works it is a performance of. */
  works?: MbWork[];
}

export interface MbUrlRelation {
  type: string;
  url: { resource: string };
}

export interface MbArtist {
  id: string;
  name: string;
  genres?: MbGenre[];
  relations?: MbUrlRelation[];
}

/** Search (`/recording?query=`) and ISRC (`/isrc/{isrc}`) answers both carry `recordings`. */
export interface MbRecordingList {
  recordings: MbRecording[];
}

export const VARIOUS_ARTISTS_ID = '89ad4ac3-39f7-470e-963a-56509c546377';

function decodeCredit(value: unknown): MbArtistCredit | undefined {
  const item = asObject(value);
  const artist = asObject(item?.artist);
  const id = asMbid(artist?.id);
  const name = asText(item?.name) ?? asText(artist?.name);
  if (!item || !artist || !id || !name) return undefined;
  const joinphrase = typeof item.joinphrase === 'string' ? item.joinphrase : undefined;
  return defined({ name, joinphrase, artist: { id, name: asText(artist.name) ?? name } });
}

function decodeGenre(value: unknown): MbGenre | undefined {
  const item = asObject(value);
  const name = asText(item?.name);
  return name === undefined ? undefined : defined({ name, count: asNumber(item?.count) });
}

function optionalList<T>(value: unknown, read: (item: unknown) => T | undefined): T[] | undefined {
  const list = readList(value, read);
  return list.length > 0 ? list : undefined;
}

function decodeReleaseGroup(value: unknown): MbReleaseGroup | undefined {
  const item = asObject(value);
  const id = asMbid(item?.id);
  if (!item || !id) return undefined;
  const secondary = asTexts(item['secondary-types']);
  return defined({
    id,
    title: asText(item.title),
    'primary-type': asText(item['primary-type']),
    'secondary-types': secondary.length > 0 ? secondary : undefined,
    genres: optionalList(item.genres, decodeGenre),
  });
}

function decodeLabelInfo(value: unknown): MbLabelInfo | undefined {
  const label = asObject(asObject(value)?.label);
  const name = asText(label?.name);
  return name === undefined
    ? undefined
    : defined({ label: defined({ id: asMbid(label?.id), name }), 'catalog-number': asText(asObject(value)?.['catalog-number']) });
}

/** The works of a recording's relations: `performance` relations to a work, with that work's artist relations. */
function decodeWorks(relations: unknown): MbWork[] | undefined {
  const works = asList(relations).flatMap((relation): MbWork[] => {
    const work = asObject(asObject(relation)?.work);
    const id = asMbid(work?.id);
    if (!work || !id) return [];
    const credits = asList(work.relations).flatMap((credit): MbWorkCredit[] => {
      const type = asText(asObject(credit)?.type);
      const name = asText(asObject(asObject(credit)?.artist)?.name);
      return type !== undefined && name !== undefined ? [{ type, artist: { name } }] : [];
    });
    const iswcs = asTexts(work.iswcs);
    return [defined({ id, title: asText(work.title), iswcs: iswcs.length > 0 ? iswcs : undefined, relations: credits.length > 0 ? credits : undefined })];
  });
  return works.length > 0 ? works : undefined;
}

export function decodeRelease(value: unknown): MbRelease | undefined {
  const item = asObject(value);
  const id = asMbid(item?.id);
  const title = asText(item?.title);
  if (!item || !id || title === undefined) return undefined;
  return defined({
    id,
    title,
    status: asText(item.status),
    date: asText(item.date),
    'artist-credit': optionalList(item['artist-credit'], decodeCredit),
    'release-group': decodeReleaseGroup(item['release-group']),
    'label-info': optionalList(item['label-info'], decodeLabelInfo),
    genres: optionalList(item.genres, decodeGenre),
    barcode: asText(item.barcode),
  });
}

export function decodeRecording(value: unknown): MbRecording | undefined {
  const item = asObject(value);
  const id = asMbid(item?.id);
  const title = asText(item?.title);
  if (!item || !id || title === undefined) return undefined;
  const isrcs = asTexts(item.isrcs);
  return defined({
    id,
    title,
    score: asNumber(item.score),
    'first-release-date': asText(item['first-release-date']),
    'artist-credit': optionalList(item['artist-credit'], decodeCredit),
    releases: optionalList(item.releases, decodeRelease),
    isrcs: isrcs.length > 0 ? isrcs : undefined,
    genres: optionalList(item.genres, decodeGenre),
    works: decodeWorks(item.relations) ?? (Array.isArray(item.works) ? readList(item.works, (work) => decodeWorks([{ work }])?.[0]) : undefined),
  });
}

export function decodeRecordingList(value: unknown): MbRecordingList | null {
  const body = asObject(value);
  if (!body || !Array.isArray(body.recordings)) throw new Error('no "recordings" list');
  const recordings = readList(body.recordings, decodeRecording);
  return recordings.length > 0 ? { recordings } : null;
}

export function decodeArtist(value: unknown): MbArtist | undefined {
  const item = asObject(value);
  const id = asMbid(item?.id);
  const name = asText(item?.name);
  if (!item || !id || name === undefined) return undefined;
  const relations = asList(item.relations).flatMap((relation): MbUrlRelation[] => {
    const entry = asObject(relation);
    const type = asText(entry?.type);
    const resource = asText(asObject(entry?.url)?.resource);
    return type !== undefined && resource !== undefined && isHttpUrl(resource) ? [{ type, url: { resource } }] : [];
  });
  return defined({ id, name, genres: optionalList(item.genres, decodeGenre), relations: relations.length > 0 ? relations : undefined });
}

/** Throws for a 200 answer that is not the entity asked for (a lookup's answer must be one). */
export function required<T>(decode: (value: unknown) => T | undefined, what: string): (value: unknown) => T {
  return (value) => {
    const decoded = decode(value);
    if (decoded === undefined) throw new Error(`not a ${what}`);
    return decoded;
  };
}
