import type { Comments } from './comment-packet';

// Comment names (Vorbis I spec section 5.2.2 and the names taggers write in practice) to the
// submission fields of docs/dj-software.md "How the titles arrive". Pure.

const FIELD_OF_NAME: Readonly<Record<string, string>> = {
  ARTIST: 'artist',
  TITLE: 'title',
  ALBUM: 'album',
  ALBUMARTIST: 'albumartist',
  'ALBUM ARTIST': 'albumartist',
  DATE: 'date',
  GENRE: 'genre',
  ISRC: 'isrc',
  COMPOSER: 'composer',
  LYRICIST: 'lyricist',
  LABEL: 'label',
  ORGANIZATION: 'label',
  PUBLISHER: 'publisher',
  BPM: 'bpm',
  KEY: 'key',
  INITIALKEY: 'key',
  COMMENT: 'comments',
  DESCRIPTION: 'comments',
  TRACKTOTAL: 'track_total',
  TOTALTRACKS: 'track_total',
  DISCTOTAL: 'disc_total',
  TOTALDISCS: 'disc_total',
  MUSICBRAINZ_TRACKID: 'musicbrainzrecordingid',
  MUSICBRAINZ_ARTISTID: 'musicbrainzartistid',
  MUSICBRAINZ_ALBUMID: 'musicbrainzalbumid',
  MUSICBRAINZ_RELEASEGROUPID: 'musicbrainzreleasegroupid',
};

/** TRACKNUMBER and DISCNUMBER may read "3/12": the number and its total. */
const NUMBER_WITH_TOTAL: Readonly<Record<string, readonly [string, string]>> = {
  TRACKNUMBER: ['track', 'track_total'],
  DISCNUMBER: ['disc', 'disc_total'],
};

/** The comment names worth keeping while a header is read. */
export function isWantedComment(name: string): boolean {
  return Object.hasOwn(FIELD_OF_NAME, name) || Object.hasOwn(NUMBER_WITH_TOTAL, name);
}

/** A submission's fields from one comment header; repeated names are joined with ", ". */
export function fieldsFromComments(comments: Comments): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, values] of comments) {
    const present = values.map((value) => value.trim()).filter((value) => value !== '');
    if (present.length === 0) continue;
    const numbered = Object.hasOwn(NUMBER_WITH_TOTAL, name) ? NUMBER_WITH_TOTAL[name] : undefined;
    if (numbered) {
      const [number, total] = (present[0] ?? '').split('/').map((part) => part.trim());
      if (number) fields[numbered[0]] = number;
      if (total && fields[numbered[1]] === undefined) fields[numbered[1]] = total;
      continue;
    }
    const field = FIELD_OF_NAME[name];
    if (field !== undefined && fields[field] === undefined) fields[field] = present.join(', ');
  }
  return fields;
}
