import { isHttpUrl } from '../domain/http-url';
import type { ImageCandidate, ImageCategory } from '../domain/track';
import type { Enricher } from './enricher';
import { asMbid, asNumber, asObject, asText, fieldMbid, readList } from './json-read';
import { lookupJson, type ServiceDeps } from './service-deps';

// fanart.tv v3 (docs/enrichment.md; needs a personal API key): the artist's images by MusicBrainz artist id
// (`/music/{mbid}`) -> fanart, thumbnails, logos, banners, and the album cover of the release
// group, from the artist's answer or else from `/music/albums/{release-group mbid}`.

const SERVICE = 'fanarttv';
const FANART_COUNT = 3;

interface FanartImage {
  url: string;
  likes?: number;
}

/** fanart.tv's own shape: image lists by kind, and `albums` by release-group MBID. */
interface FanartAnswer {
  artistbackground?: FanartImage[];
  artistthumb?: FanartImage[];
  hdmusiclogo?: FanartImage[];
  musiclogo?: FanartImage[];
  musicbanner?: FanartImage[];
  albums?: Record<string, { albumcover?: FanartImage[] }>;
}

const ARTIST_KINDS = ['artistbackground', 'artistthumb', 'hdmusiclogo', 'musiclogo', 'musicbanner'] as const;

export interface FanartTvOptions {
  baseUrl: string;
  apiKey: string;
}

export function createFanartTv(deps: ServiceDeps, options: FanartTvOptions): Enricher {
  const lookup = (path: string, signal: AbortSignal) =>
    lookupJson<FanartAnswer>(
      deps,
      { service: SERVICE, key: path, url: `${options.baseUrl}/${path}?api_key=${encodeURIComponent(options.apiKey)}`, decode: decodeAnswer },
      signal,
    );

  return {
    name: SERVICE,
    async enrich(track, { signal }) {
      const artistId = fieldMbid(track, 'musicbrainzartistid');
      const groupId = fieldMbid(track, 'musicbrainzreleasegroupid');
      const artist = artistId ? await lookup(`music/${artistId}`, signal) : null;
      let albumCover = groupId ? artist?.albums?.[groupId]?.albumcover : undefined;
      if (groupId && !albumCover) albumCover = (await lookup(`music/albums/${groupId}`, signal))?.albums?.[groupId]?.albumcover;

      const found: ImageCandidate[] = [
        ...best(albumCover, 1, 'cover'),
        ...best(artist?.artistbackground, FANART_COUNT, 'fanart'),
        ...best(artist?.artistthumb, 1, 'thumbnail'),
        ...best(artist?.hdmusiclogo?.length ? artist.hdmusiclogo : artist?.musiclogo, 1, 'logo'),
        ...best(artist?.musicbanner, 1, 'banner'),
      ];
      return found.length > 0 ? { images: found } : null;
    },
  };
}

/** The most liked images first (fanart.tv sends `likes` as a string). */
function best(list: readonly FanartImage[] | undefined, count: number, category: ImageCategory): ImageCandidate[] {
  return [...(list ?? [])]
    .sort((a, b) => (b.likes ?? 0) - (a.likes ?? 0))
    .slice(0, count)
    .map((item) => ({ category, url: item.url, source: SERVICE }));
}

function decodeImages(value: unknown): FanartImage[] | undefined {
  const list = readList(value, (item) => {
    const entry = asObject(item);
    const url = asText(entry?.url);
    if (url === undefined || !isHttpUrl(url)) return undefined;
    const likes = asNumber(entry?.likes);
    return likes === undefined ? { url } : { url, likes };
  });
  return list.length > 0 ? list : undefined;
}

function decodeAnswer(raw: unknown): FanartAnswer | null {
  const body = asObject(raw);
  if (!body) throw new Error('not a JSON object');
  // Unknown ids answer 404, some mirrors 200 with {"status": "error", "error message": "Not found"}.
  if (body.status === 'error') return null;
  const answer: FanartAnswer = {};
  for (const kind of ARTIST_KINDS) {
    const images = decodeImages(body[kind]);
    if (images) answer[kind] = images;
  }
  const albums: NonNullable<FanartAnswer['albums']> = {};
  for (const [id, album] of Object.entries(asObject(body.albums) ?? {})) {
    const covers = decodeImages(asObject(album)?.albumcover);
    const groupId = asMbid(id);
    if (covers && groupId) albums[groupId] = { albumcover: covers };
  }
  if (Object.keys(albums).length > 0) answer.albums = albums;
  return Object.keys(answer).length > 0 ? answer : null;
}
