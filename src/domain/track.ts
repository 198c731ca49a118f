// The shapes that travel through svc. This module imports nothing but the play log's and the
// corrections' types (play.ts, correction.ts): every layer may depend on it, it depends on none.
import type { CorrectionEntry } from './correction';
import type { PlayInfo } from './play';

/**
 * A single metadata value. Submissions yield scalars and lists of text (What's Now Playing sends
 * `isrc`, `genres`, ... as arrays); maps (`enrichment_sources`, field -> provider) come from
 * enrichment.
 */
export type FieldValue = string | number | boolean | string[] | Readonly<Record<string, string>>;

/** Track metadata keyed by field name (lower-case names as sent by DJ software). */
export type TrackFields = Record<string, FieldValue>;

/** What the server keeps for one successful submission. */
export interface TrackRecord {
  dbid: number;
  /** Arrival order; the current track is the stored record with the highest one. */
  receivedSeq: number;
  receivedAt: string;
  metadata: TrackFields;
  /** Its air times, kind, channel and listeners (docs/play-log.md); absent only on records not read from the store. */
  play?: PlayInfo;
  /** The corrections made to it, oldest first (docs/http-api.md "`PATCH /v1/history/<dbid>`: correct a record"); absent when none. */
  corrections?: readonly CorrectionEntry[];
}

/**
 * A field of a track (its metadata, a /v1/last object, a frame) as text: a string trimmed, a
 * number in decimal; undefined when absent, blank or anything else (a list, a map, a boolean).
 */
export function fieldText(track: object, key: string): string | undefined {
  const value = (track as Readonly<Record<string, unknown>>)[key];
  const text = typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
  return text === '' ? undefined : text;
}

/** A list field (e.g. `artistwebsites`, `isrc`) as its texts, also accepting a single string. */
export function fieldTexts(track: Readonly<TrackFields>, key: string): string[] {
  const value = track[key];
  if (typeof value === 'string') return value.trim() === '' ? [] : [value.trim()];
  return Array.isArray(value) ? value : [];
}

export const IMAGE_CATEGORIES = ['cover', 'fanart', 'banner', 'logo', 'thumbnail'] as const;
export type ImageCategory = (typeof IMAGE_CATEGORIES)[number];

/** A stored image of a track, fetchable at `cover/<key>` (what an image frame is built from). */
export interface TrackImage {
  dbid: number;
  category: ImageCategory;
  key: string;
  mimeType: string;
  artist?: string;
  title?: string;
  album?: string;
}

/** An image an enricher found; the image store downloads it (maybe after the response). */
export interface ImageCandidate {
  category: ImageCategory;
  url: string;
  /** Name of the provider that found it. */
  source: string;
}

/**
 * Fields that carry numbers; numeric strings (GET sends strings) become numbers. The totals are
 * spelled as What's Now Playing spells them; `deck` is not here: Denon names decks `2B`.
 */
export const NUMERIC_FIELDS: ReadonlySet<string> = new Set([
  'bpm',
  'duration',
  'bitrate',
  'samplerate',
  'track',
  'track_total',
  'disc',
  'disc_total',
  'fpcalcduration',
]);

/** Known text fields: a number or boolean sent for one of these is dropped with a warning. */
export const TEXT_FIELDS: ReadonlySet<string> = new Set([
  'artist',
  'title',
  'album',
  'albumartist',
  'genre',
  'date',
  'composer',
  'lyricist',
  'key',
  'publisher',
  'label',
  'isrc',
  'comments',
  'musicbrainzartistid',
  'musicbrainzrecordingid',
  'musicbrainzalbumid',
  'musicbrainzreleasegroupid',
  'fpcalcfingerprint',
  'coverurl',
  'artistlongbio',
  'artistshortbio',
]);

/**
 * System and security-sensitive fields removed from every submission
 * (docs/http-api.md; docs/decisions.md "HTTP behaviour"). Compared case-insensitively.
 */
export const REMOVED_FIELDS: ReadonlySet<string> = new Set([
  'hostname',
  'hostfqdn',
  'hostip',
  'ipaddress',
  'httpport',
  'dbid',
  'filename',
  'previoustrack',
  'cache_warmed',
  'track_received',
  'version',
  'coverimagetype',
  'secret',
  '__proto__',
  'constructor',
  'prototype',
]);

/** Suffixes that mark binary payloads (e.g. `coverimageraw`, `artistthumbnailbase64`). */
export const REMOVED_FIELD_SUFFIXES: readonly string[] = ['raw', 'base64'];

/** A submission needs one of these non-empty, or both fingerprint fields (docs/decisions.md). */
export const IDENTIFYING_FIELDS: readonly string[] = ['artist', 'title', 'isrc', 'musicbrainzrecordingid'];
export const FINGERPRINT_FIELDS: readonly [string, string] = ['fpcalcfingerprint', 'fpcalcduration'];
