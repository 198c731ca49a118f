// What MusicBrainz WS/2 accepts, restated from its own server code (facts only, no code):
// metabrainz/musicbrainz-server at 11cd769a5935c243a48455bc3a21158179170368,
// - lib/MusicBrainz/Server/WebService/Validator.pm: `validate_inc` splits `inc` on '+' or ' ',
//   accepts a value when it is in the resource's list, or is a relationship inc (`<entity>-rels`,
//   when the list has `_relations`), or is an "extra" inc enabled by another inc of the same
//   request (%extra_inc); otherwise the request is refused with one of two 400 texts.
// - lib/MusicBrainz/Server/Controller/WS/2/{Recording,Release,ReleaseGroup,Artist,ISRC}.pm: the
//   `inc` lists of each resource's lookup (the `action => .../lookup` definitions; ISRC has one).
// - lib/MusicBrainz/Server/ControllerBase/WS/2.pm `_limit_and_offset`: limit and offset must be
//   natural numbers; lib/MusicBrainz/Server/Validation.pm `is_valid_isrc`: /^[A-Z]{2}[A-Z0-9]{3}[0-9]{7}$/.
// - lib/MusicBrainz/Server/WebService/JSONSerializer.pm `output_error`: {"error", "help"}.

export const HELP = 'For usage, please see: https://musicbrainz.org/development/mmd';

export type LookupResource = 'recording' | 'release' | 'release-group' | 'artist' | 'isrc';

const TAGS_AND_RATINGS = ['tags', 'user-tags', 'genres', 'user-genres', 'ratings', 'user-ratings'];

/** The inc values each lookup accepts (`_relations`: any `<entity>-rels`). */
export const LOOKUP_INCS: Readonly<Record<LookupResource, readonly string[]>> = {
  recording: [
    'artists',
    'releases',
    'artist-credits',
    'puids',
    'isrcs',
    'aliases',
    '_relations',
    ...TAGS_AND_RATINGS,
    'release-groups',
    'work-level-rels',
    'annotation',
  ],
  release: [
    'artists',
    'labels',
    'recordings',
    'release-groups',
    'aliases',
    ...TAGS_AND_RATINGS,
    'collections',
    'user-collections',
    'artist-credits',
    'discids',
    'media',
    'recording-level-rels',
    'release-group-level-rels',
    'work-level-rels',
    '_relations',
    'annotation',
  ],
  'release-group': ['artists', 'releases', 'artist-credits', 'aliases', 'annotation', '_relations', ...TAGS_AND_RATINGS],
  artist: ['recordings', 'releases', 'release-groups', 'works', 'aliases', 'annotation', '_relations', ...TAGS_AND_RATINGS],
  // ISRC.pm: no release-groups, no genres, no annotation.
  isrc: ['artists', 'releases', 'puids', 'isrcs', 'artist-credits', 'aliases', '_relations', 'tags', 'user-tags', 'ratings', 'user-ratings'],
};

/** %extra_inc: an inc allowed only together with another (generic part; `various-artists` is per artist). */
const EXTRA_INCS: Readonly<Record<string, { generic: readonly string[]; artist?: readonly string[] }>> = {
  recordings: { generic: ['artist-credits', 'puids', 'isrcs'] },
  'recording-rels': { generic: ['artist-credits'] },
  releases: { generic: ['artist-credits', 'discids', 'media', 'status', 'type'], artist: ['various-artists'] },
  'release-rels': { generic: ['artist-credits'] },
  'release-groups': { generic: ['artist-credits', 'type'] },
  'release-group-rels': { generic: ['artist-credits'] },
  works: { generic: ['artist-credits'] },
};

/** The entities relationships can point at (WS/2 relation types are `<entity>-rels`). */
const RELATABLE = ['area', 'artist', 'event', 'genre', 'instrument', 'label', 'place', 'recording', 'release', 'release-group', 'series', 'url', 'work'];
const RELATION_INCS = new Set(RELATABLE.map((entity) => `${entity}-rels`));

/** The 400 text MusicBrainz gives for this `inc` on this resource, or null when it is accepted. */
export function incError(resource: LookupResource, inc: string | undefined): string | null {
  const values = (inc ?? '').split(/[+ ]/).filter((value) => value !== '');
  const accepted = new Set(LOOKUP_INCS[resource]);
  const extra = new Set(
    values.flatMap((value) => [...(EXTRA_INCS[value]?.generic ?? []), ...(resource === 'artist' ? (EXTRA_INCS[value]?.artist ?? []) : [])]),
  );
  for (const raw of values) {
    const value = raw.replace('mediums', 'media');
    if (accepted.has('_relations') && RELATION_INCS.has(value)) continue;
    if (accepted.has(value) || extra.has(value)) continue;
    const enablers = Object.entries(EXTRA_INCS)
      .filter(([, lists]) => lists.generic.includes(value) || (resource === 'artist' && lists.artist?.includes(value)))
      .map(([enabler]) => enabler);
    if (enablers.length > 0) {
      return `${value} is not a valid option for the inc parameter for the ${resource} resource unless you specify one of the following other inc parameters: ${enablers.join(', ')}`;
    }
    return `${value} is not a valid inc parameter for the ${resource} resource.`;
  }
  return null;
}

/** The set of incs a request asked for (after validation). */
export function incSet(inc: string | undefined): Set<string> {
  return new Set((inc ?? '').split(/[+ ]/).filter((value) => value !== ''));
}

export function isValidIsrc(isrc: string): boolean {
  return /^[A-Z]{2}[A-Z0-9]{3}[0-9]{7}$/.test(isrc);
}

/** `limit`/`offset`: absent or a natural number (is_nat); a larger limit is capped at 100. */
export function isNaturalOrAbsent(value: string | undefined): boolean {
  return value === undefined || value === '' || /^\d+$/.test(value);
}
