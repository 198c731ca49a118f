import { fieldText, type TrackFields, type TrackRecord } from '../domain/track';

// Some DJ software sends the same track twice in a row (docs/title-first.md "The same track
// twice"): the same artist and title as the current track, soon after it, is the same play. Pure.

/** True when `fields` name the artist and title of `current`, received within `windowSeconds` of it. */
export function isSamePlay(current: TrackRecord | null, fields: Readonly<TrackFields>, nowMs: number, windowSeconds: number): current is TrackRecord {
  if (!current || windowSeconds <= 0) return false;
  const age = nowMs - Date.parse(current.receivedAt);
  // A little clock skew between instances (a negative age) still counts as soon after.
  if (!(age <= windowSeconds * 1000)) return false;
  const artist = comparable(fields, 'artist');
  const title = comparable(fields, 'title');
  // Both names are needed: two submissions carrying only an ISRC are not compared here.
  if (artist === undefined || title === undefined) return false;
  return artist === comparable(current.metadata, 'artist') && title === comparable(current.metadata, 'title');
}

function comparable(track: Readonly<TrackFields>, key: string): string | undefined {
  return fieldText(track, key)?.toLowerCase();
}
