import { fieldText, type TrackFields } from '../domain/track';

// The sound recording performance complement (docs/play-log.md "The performance complement"):
// within 3 hours on one channel, at most 3 plays from one release (2 in a row) and at most 4 by
// one featured artist (3 in a row). Pure: the caller hands in the channel's recent music plays.

export const COMPLEMENT_WINDOW_MS = 3 * 60 * 60 * 1000;

const LIMITS = {
  release: { total: 3, inRow: 2 },
  artist: { total: 4, inRow: 3 },
} as const;

export interface ComplementPlay {
  startedAt: string;
  metadata: Readonly<TrackFields>;
}

/** The release a play is from: its release group, else its album, compared without case. */
function releaseKey(metadata: Readonly<TrackFields>): string | undefined {
  const group = fieldText(metadata, 'musicbrainzreleasegroupid');
  if (group !== undefined) return `rg:${group.toLowerCase()}`;
  const album = fieldText(metadata, 'album');
  return album === undefined ? undefined : `album:${album.toLowerCase()}`;
}

function artistKey(metadata: Readonly<TrackFields>): string | undefined {
  return fieldText(metadata, 'artist')?.toLowerCase();
}

/**
 * Warnings for `latest`, the newest of `plays` (oldest first, music only, one channel): those
 * inside the window before it are counted, and the run of plays right before it.
 */
export function complementWarnings(plays: readonly ComplementPlay[]): string[] {
  const latest = plays[plays.length - 1];
  if (!latest) return [];
  const since = Date.parse(latest.startedAt) - COMPLEMENT_WINDOW_MS;
  const window = plays.filter((play) => Date.parse(play.startedAt) > since);
  const warnings: string[] = [];
  const check = (what: 'release' | 'artist', keyOf: (metadata: Readonly<TrackFields>) => string | undefined, name: string | undefined) => {
    const key = keyOf(latest.metadata);
    if (key === undefined) return;
    const total = window.filter((play) => keyOf(play.metadata) === key).length;
    let inRow = 0;
    for (let index = window.length - 1; index >= 0 && keyOf(window[index]?.metadata ?? {}) === key; index -= 1) inRow += 1;
    const limit = LIMITS[what];
    const label = what === 'release' ? `from release "${name ?? key}"` : `by artist "${name ?? key}"`;
    if (inRow > limit.inRow) warnings.push(`performance complement: ${inRow} plays in a row ${label} (at most ${limit.inRow} in a row)`);
    else if (total > limit.total) warnings.push(`performance complement: ${total} plays ${label} within 3 hours (at most ${limit.total})`);
  };
  check('release', releaseKey, fieldText(latest.metadata, 'album'));
  check('artist', artistKey, fieldText(latest.metadata, 'artist'));
  return warnings;
}
