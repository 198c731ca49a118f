import { fieldText, type ImageCandidate } from '../domain/track';
import { foundFields, image, type Enricher } from './enricher';
import { asMbid, asObject, asText, fieldMbid, readList } from './json-read';
import { normalize, similarity } from './match';
import { lookupJson, type ServiceDeps } from './service-deps';

// TheAudioDB (docs/enrichment.md): the artist by MusicBrainz id (`artist-mb.php?i=`), else by name
// (`search.php?s=`) -> a biography (only used when none came earlier) and the artist's
// thumbnail, logo, banner and fanart. The free public key is `123`.

const SERVICE = 'theaudiodb';
/** A by-name hit must be at least this close to the submitted artist. */
const MIN_NAME_SIMILARITY = 0.9;
const IMAGE_FIELDS = [
  ['strArtistThumb', 'thumbnail'],
  ['strArtistLogo', 'logo'],
  ['strArtistBanner', 'banner'],
  ['strArtistFanart', 'fanart'],
  ['strArtistFanart2', 'fanart'],
  ['strArtistFanart3', 'fanart'],
  ['strArtistFanart4', 'fanart'],
] as const;

/** One artist of an answer, with TheAudioDB's field names; `strBiographyXX` by language. */
type AudioDbArtist = Record<string, string>;

interface AudioDbAnswer {
  artists: AudioDbArtist[];
}

export interface TheAudioDbOptions {
  baseUrl: string;
  apiKey: string;
  language: string;
}

export function createTheAudioDb(deps: ServiceDeps, options: TheAudioDbOptions): Enricher {
  const lookup = (endpoint: string, signal: AbortSignal) =>
    lookupJson<AudioDbAnswer>(
      deps,
      { service: SERVICE, key: endpoint, url: `${options.baseUrl}/${encodeURIComponent(options.apiKey)}/${endpoint}`, decode: decodeAnswer },
      signal,
    );

  return {
    name: SERVICE,
    async enrich(track, { signal }) {
      const artistId = fieldMbid(track, 'musicbrainzartistid');
      let artist = artistId ? (await lookup(`artist-mb.php?i=${artistId}`, signal))?.artists[0] : undefined;
      const name = primaryArtist(fieldText(track, 'artist'));
      if (!artist && name !== undefined) {
        const found = (await lookup(`search.php?s=${encodeURIComponent(name.toLowerCase())}`, signal))?.artists ?? [];
        artist = found.find((candidate) => isSameArtist(candidate, name, artistId));
      }
      if (!artist) return null;
      const biography = artist[`strBiography${options.language.slice(0, 2).toUpperCase()}`] ?? artist.strBiographyEN;
      return { fields: foundFields({ artistlongbio: biography }), images: images(artist) };
    },
  };
}

/** A name search can find namesakes: the name must agree, and so must the MBID when both have one. */
function isSameArtist(candidate: AudioDbArtist, name: string, artistId: string | undefined): boolean {
  const candidateId = asMbid(candidate.strMusicBrainzID);
  if (artistId !== undefined && candidateId !== undefined && candidateId !== artistId) return false;
  return similarity(candidate.strArtist ?? '', name) >= MIN_NAME_SIMILARITY;
}

/** "A feat. B" is searched as "A" (but "Simon & Garfunkel" stays whole). */
function primaryArtist(artist: string | undefined): string | undefined {
  if (artist === undefined) return undefined;
  const first = artist.split(/\s+[([]?(?:feat\.?|ft\.?|featuring)\s+/i)[0]?.trim();
  return first !== undefined && normalize(first) !== '' ? first : undefined;
}

function images(artist: AudioDbArtist): ImageCandidate[] {
  return IMAGE_FIELDS.flatMap(([field, category]) => image(category, artist[field], SERVICE));
}

function decodeAnswer(raw: unknown): AudioDbAnswer | null {
  const body = asObject(raw);
  if (!body) throw new Error('not a JSON object');
  // "No such artist" is `{"artists": null}`.
  const artists = readList(body.artists, (item) => {
    const fields = asObject(item);
    if (!fields) return undefined;
    const artist: AudioDbArtist = {};
    for (const [key, value] of Object.entries(fields)) {
      const text = asText(value);
      if (
        text !== undefined &&
        (key === 'idArtist' ||
          key === 'strArtist' ||
          key === 'strMusicBrainzID' ||
          /^strBiography[A-Z]{2}$/.test(key) ||
          IMAGE_FIELDS.some(([name]) => name === key))
      ) {
        artist[key] = text;
      }
    }
    return artist.strArtist !== undefined ? artist : undefined;
  });
  return artists.length > 0 ? { artists } : null;
}
