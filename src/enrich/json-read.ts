import { isPlainObject } from '../domain/plain-object';
import { fieldTexts, type TrackFields } from '../domain/track';

// Reading the JSON of outside services (and a track's MBID fields) without trusting its shape: every accessor checks the
// type and answers undefined (or an empty list) for anything unexpected. Pure.

export type JsonObject = Record<string, unknown>;

export function asObject(value: unknown): JsonObject | undefined {
  return isPlainObject(value) ? value : undefined;
}

/** A non-empty string after trimming, else undefined. */
export function asText(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** A finite number, or a numeric string (some services send numbers as strings). */
export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    const number = Number(value);
    return Number.isFinite(number) ? number : undefined;
  }
  return undefined;
}

export function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asTexts(value: unknown): string[] {
  return asList(value).flatMap((item) => asText(item) ?? []);
}

/** Maps a list, dropping the items `read` cannot read. */
export function readList<T>(value: unknown, read: (item: unknown) => T | undefined): T[] {
  return asList(value).flatMap((item) => {
    const read_ = read(item);
    return read_ === undefined ? [] : [read_];
  });
}

/** Copies the defined properties only, so decoded answers stay minimal and JSON-clean. */
export function defined<T extends object>(value: T): T {
  const result: Partial<T> = {};
  for (const key of Object.keys(value) as (keyof T)[]) {
    if (value[key] !== undefined) result[key] = value[key];
  }
  return result as T;
}

const MBID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A MusicBrainz identifier (a UUID), lower-cased; undefined when the text is not one. */
export function asMbid(value: unknown): string | undefined {
  const text = asText(value);
  return text !== undefined && MBID.test(text) ? text.toLowerCase() : undefined;
}

/**
 * The first MusicBrainz id in a track field that holds one id or a list of them (What's Now
 * Playing sends `musicbrainzartistid` as a list).
 */
export function fieldMbid(track: Readonly<TrackFields>, key: string): string | undefined {
  return fieldTexts(track, key)
    .map(asMbid)
    .find((id) => id !== undefined);
}
