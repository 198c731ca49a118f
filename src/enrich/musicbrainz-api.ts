import { lookupJson, type ServiceDeps } from './service-deps';
import {
  decodeArtist,
  decodeRecording,
  decodeRecordingList,
  decodeRelease,
  required,
  type MbArtist,
  type MbRecording,
  type MbRecordingList,
  type MbRelease,
} from './musicbrainz-decode';

// MusicBrainz WS/2 lookups and searches (JSON), each cached and coalesced by Lookups and
// spaced one second apart by the client's rate limiter.

const SERVICE = 'musicbrainz';
const SEARCH_LIMIT = 25;

export interface RecordingQuery {
  artist: string;
  title: string;
  album?: string;
}

export class MusicBrainzApi {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly baseUrl: string,
  ) {}

  /**
   * `/recording/{mbid}` with artists, releases (and their release groups), ISRCs, genres, and the
   * works it performs with their writers (`work-rels` + `work-level-rels` + `artist-rels`: the
   * work relations and, on each work, its artist relations such as composer and lyricist).
   */
  recording(id: string, signal: AbortSignal): Promise<MbRecording | null> {
    return this.get(
      `recording/${id}`,
      'inc=artist-credits+releases+release-groups+isrcs+genres+work-rels+work-level-rels+artist-rels',
      required(decodeRecording, 'recording'),
      signal,
    );
  }

  /**
   * `/isrc/{isrc}`: the recordings that carry an ISRC, with their artists (enough to check them
   * against a submitted artist and title). The /isrc resource refuses `release-groups` (and
   * `genres`): musicbrainz-server Controller/WS/2/ISRC.pm lists `artists releases puids isrcs
   * artist-credits aliases` and relationship, tag and rating incs only. The releases and their
   * release groups come from the recording lookup that follows.
   */
  isrc(isrc: string, signal: AbortSignal): Promise<MbRecordingList | null> {
    return this.get(`isrc/${isrc}`, 'inc=artist-credits', decodeRecordingList, signal);
  }

  /** `/recording?query=` with a Lucene query on title, artist and (when given) album. */
  search(query: RecordingQuery, signal: AbortSignal): Promise<MbRecordingList | null> {
    const terms = [`recording:${quote(query.title)}`, `artist:${quote(query.artist)}`];
    if (query.album !== undefined) terms.push(`release:${quote(query.album)}`);
    const lucene = terms.join(' AND ');
    return this.get('recording', `query=${encodeURIComponent(lucene)}&limit=${SEARCH_LIMIT}`, decodeRecordingList, signal);
  }

  /** `/release/{mbid}` with labels, genres and the release group. */
  release(id: string, signal: AbortSignal): Promise<MbRelease | null> {
    return this.get(`release/${id}`, 'inc=labels+genres+release-groups', required(decodeRelease, 'release'), signal);
  }

  /** `/artist/{mbid}` with URL relations (official site, Wikidata, ...) and genres. */
  artist(id: string, signal: AbortSignal): Promise<MbArtist | null> {
    return this.get(`artist/${id}`, 'inc=url-rels+genres', required(decodeArtist, 'artist'), signal);
  }

  private get<T>(path: string, query: string, decode: (raw: unknown) => T | null, signal: AbortSignal): Promise<T | null> {
    const key = `${path}?${query}`;
    return lookupJson(this.deps, { service: SERVICE, key, url: `${this.baseUrl}/${key}&fmt=json`, decode }, signal);
  }
}

/** A Lucene phrase: quotes and backslashes escaped. */
function quote(text: string): string {
  return `"${text.replace(/["\\]/g, '\\$&')}"`;
}
