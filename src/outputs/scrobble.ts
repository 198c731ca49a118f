import { fieldText } from '../domain/track';
import type { TrackData } from './output';

// What the scrobblers (listenbrainz, lastfm) send and when (docs/outputs.md "Scrobbling: what
// counts as a listen"). Pure: no I/O.
//
// The station scrobbles a play when it has ended, when its length is known: ListenBrainz and
// Last.fm count a listen of half the track or 4 minutes, whichever comes first, and not of a
// track under 30 seconds. A play that was not music (a jingle, an ad, talk) is never sent, nor
// one that nobody heard when the record carries a listener count of 0.

export interface Play {
  dbid: number;
  artist: string;
  title: string;
  album?: string;
  /** Seconds, when the record says. */
  durationSeconds?: number;
  /** When it went on air, ms since the epoch. */
  startedAtMs: number;
  recordingMbid?: string;
  releaseMbid?: string;
  artistMbid?: string;
  isrc?: string;
}

/** A track shorter than this is never a listen (both services' rule). */
export const MIN_TRACK_SECONDS = 30;
/** Four minutes played always count. */
const ALWAYS_COUNTS_SECONDS = 240;

/** `kind` absent means music (docs/outputs.md "Scrobbling: what counts as a listen"). */
export function isMusic(data: TrackData): boolean {
  const kind = data.kind;
  return kind === undefined || kind === null || kind === 'music';
}

/** Listener count of the record when it carries one: a number, or the play log's `{atp}`. */
export function listenerCount(data: TrackData): number | undefined {
  const listeners = data.listeners;
  if (typeof listeners === 'number') return listeners;
  if (typeof listeners === 'object' && listeners !== null && typeof (listeners as { atp?: unknown }).atp === 'number')
    return (listeners as { atp: number }).atp;
  return undefined;
}

/** Why a record is never scrobbled, or undefined when it may be. */
export function neverScrobbled(data: TrackData): string | undefined {
  if (!isMusic(data)) return `not music (${String(data.kind)})`;
  if (listenerCount(data) === 0) return 'nobody listening';
  if (!fieldText(data, 'artist') || !fieldText(data, 'title')) return 'no artist or title';
  return undefined;
}

/** The play a record describes; `receivedAtMs` is when it became current (the record's `started_at` wins). */
export function playOf(data: TrackData, receivedAtMs: number): Play | undefined {
  const artist = fieldText(data, 'artist');
  const title = fieldText(data, 'title');
  if (!artist || !title) return undefined;
  const started = typeof data.started_at === 'string' ? Date.parse(data.started_at) : Number.NaN;
  const duration = Number(fieldText(data, 'duration'));
  const optional: Partial<Play> = {};
  const album = fieldText(data, 'album');
  if (album) optional.album = album;
  if (Number.isFinite(duration) && duration > 0) optional.durationSeconds = duration;
  const ids = {
    recordingMbid: fieldText(data, 'musicbrainzrecordingid'),
    releaseMbid: fieldText(data, 'musicbrainzalbumid'),
    artistMbid: fieldText(data, 'musicbrainzartistid'),
    isrc: fieldText(data, 'isrc'),
  };
  for (const [key, value] of Object.entries(ids)) if (value) optional[key as keyof typeof ids] = value;
  return { dbid: data.dbid, artist, title, startedAtMs: Number.isNaN(started) ? receivedAtMs : started, ...optional };
}

/** Whether a play that ran from its start to `endedAtMs` counts as a listen, and why not. */
export function listenVerdict(play: Play, endedAtMs: number): { counts: true } | { counts: false; why: string } {
  const playedSeconds = (endedAtMs - play.startedAtMs) / 1000;
  if (play.durationSeconds !== undefined && play.durationSeconds < MIN_TRACK_SECONDS) return { counts: false, why: `shorter than ${MIN_TRACK_SECONDS} s` };
  const needed = play.durationSeconds === undefined ? MIN_TRACK_SECONDS : Math.min(play.durationSeconds / 2, ALWAYS_COUNTS_SECONDS);
  if (playedSeconds < needed) return { counts: false, why: `played ${Math.round(playedSeconds)} s of the ${Math.round(needed)} s a listen needs` };
  return { counts: true };
}

/** Whether "now playing" still makes sense for a change recorded at `createdAtMs` (not when catching up after an outage). */
export function stillPlaying(play: Play, createdAtMs: number, nowMs: number): boolean {
  const longest = (play.durationSeconds ?? 600) * 1000;
  return nowMs - createdAtMs < longest;
}
