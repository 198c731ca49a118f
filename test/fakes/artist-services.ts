import { field, json, loadFixtures, startFake, type FakeReply, type FakeServer, type RecordedRequest } from './fake-server';

// TheAudioDB v1 (https://www.theaudiodb.com/free_music_api): /api/v1/json/{key}/artist-mb.php?i=
// and /search.php?s=, both `{"artists": [...]}` or `{"artists": null}`.
// fanart.tv v3 (https://fanarttv.docs.apiary.io): /v3/music/{artist mbid}?api_key= and
// /v3/music/albums/{release-group mbid}?api_key=; 404 `{"status":"error","error message":"Not found"}`.

export const AUDIODB_KEY = '123';
export const FANART_KEY = 'fanart-test-key';

/** Image URLs in the fixtures point at the services' image hosts; the fakes point them at the local one. */
function servingImagesFrom(imageHostUrl: string, route: (request: RecordedRequest) => FakeReply): (request: RecordedRequest) => FakeReply {
  return (request) => {
    const reply = route(request);
    if (typeof reply.body !== 'string') return reply;
    const body = reply.body
      .replaceAll('https://www.theaudiodb.com/images/', `${imageHostUrl}/images/theaudiodb/`)
      .replaceAll('https://assets.fanart.tv/', `${imageHostUrl}/images/fanarttv/`);
    return { ...reply, body };
  };
}

export async function startTheAudioDbFake(imageHostUrl: string): Promise<FakeServer> {
  const byMbid = new Map<string, unknown>();
  const byName = new Map<string, unknown[]>();
  for (const body of loadFixtures('theaudiodb').values()) {
    const artists = field(body, 'artists');
    for (const artist of Array.isArray(artists) ? artists : []) {
      byMbid.set(String(field(artist, 'strMusicBrainzID')), artist);
      const name = String(field(artist, 'strArtist')).toLowerCase();
      byName.set(name, [...(byName.get(name) ?? []), artist]);
    }
  }
  const route = (request: RecordedRequest): FakeReply => {
    const match = /^\/api\/v1\/json\/([^/]+)\/(artist-mb|search)\.php$/.exec(request.path);
    if (!match) return { status: 404, headers: { 'Content-Type': 'text/html' }, body: '<html>404</html>' };
    if (match[1] !== AUDIODB_KEY) return json(200, { artists: null });
    if (match[2] === 'artist-mb') {
      const artist = byMbid.get(request.query.i ?? '');
      return json(200, { artists: artist ? [artist] : null });
    }
    const found = byName.get((request.query.s ?? '').toLowerCase());
    return json(200, { artists: found ?? null });
  };
  return startFake('theaudiodb', servingImagesFrom(imageHostUrl, route));
}

export async function startFanartTvFake(imageHostUrl: string): Promise<FakeServer> {
  const artists = new Map<string, unknown>();
  const albums = new Map<string, unknown>();
  for (const [name, body] of loadFixtures('fanarttv')) {
    if (name.startsWith('artist-')) artists.set(String(field(body, 'mbid_id')), body);
    if (name.startsWith('album-')) {
      const byGroup = field(body, 'albums');
      for (const groupId of Object.keys(typeof byGroup === 'object' && byGroup !== null ? byGroup : {})) albums.set(groupId, body);
    }
  }
  const notFound = json(404, { status: 'error', 'error message': 'Not found' });
  const route = (request: RecordedRequest): FakeReply => {
    if (request.query.api_key !== FANART_KEY) return json(401, { status: 'error', 'error message': 'Invalid API key' });
    const album = /^\/v3\/music\/albums\/([^/]+)$/.exec(request.path);
    if (album) return albums.has(album[1] ?? '') ? json(200, albums.get(album[1] ?? '')) : notFound;
    const artist = /^\/v3\/music\/([^/]+)$/.exec(request.path);
    if (artist) return artists.has(artist[1] ?? '') ? json(200, artists.get(artist[1] ?? '')) : notFound;
    return notFound;
  };
  return startFake('fanarttv', servingImagesFrom(imageHostUrl, route));
}

// AcoustID v2 /v2/lookup, with the rules of its own server code: acoustid/acoustid-server @ 376a8237,
// acoustid/api/v2/__init__.py (APIHandlerParams._parse_format/_parse_client,
// LookupHandlerParams.parse/_parse_query, APIHandler._error, iter_args_suffixes),
// acoustid/api/errors.py (codes and texts), acoustid/data/fingerprint.py (decode_fingerprint,
// FINGERPRINT_VERSION = 1), acoustid/const.py (FINGERPRINT_MAX_ALLOWED_LENGTH_DIFF = 30).
// Parameters come from the query string and a form body alike (`req.values`). In order:
// `format` must be json, jsonp or xml (error 1 'unknown format "x"'); `client` is required
// (2 'missing required parameter "client"') and must be a known application key (4 "invalid API
// key"); `meta` is split on whitespace; `maxdurationdiff` must be 1..30 (11); there must be a
// `fingerprint` or `trackid` (2); `duration` must parse as a non-zero integer (else 2 'missing
// required parameter "duration"'); the fingerprint must decode as a compressed, URL-safe base64
// chromaprint of algorithm version 1 (3 "invalid fingerprint"; this fake checks the alphabet and
// the version byte, it does not decompress). Errors are HTTP 400
// {"status": "error", "error": {"code", "message"}}; answers {"status": "ok", "results": [...]}.

export const ACOUSTID_KEY = 'acoustid-test-key';
/** Fingerprint -> lookup fixture. */
export const FINGERPRINTS: Record<string, string> = {
  AQADtEmUaEkSRZEGAP4fHD4e4sePn8iR4_iRI0eOHzmO4_iR40eOHDly5MiRI0eOHDkA: 'lookup-teardrop',
};
const FORMATS = new Set(['json', 'jsonp', 'xml']);
const FINGERPRINT_VERSION = 1;
const MAX_ALLOWED_LENGTH_DIFF = 30;

/** The version byte of a compressed chromaprint in URL-safe base64, or undefined when it is not one. */
export function fingerprintVersion(fingerprint: string): number | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(fingerprint)) return undefined;
  const bytes = Buffer.from(fingerprint, 'base64url');
  // One version byte, then a 3-byte count of hashes, then the compressed hashes.
  return bytes.length > 4 ? bytes[0] : undefined;
}

/** Python's int(): optional sign, digits, surrounding whitespace. */
export function pythonInt(value: string | undefined): number | undefined {
  return value !== undefined && /^\s*[+-]?\d+\s*$/.test(value) ? Number.parseInt(value, 10) : undefined;
}

export async function startAcoustIdFake(): Promise<FakeServer> {
  const fixtures = loadFixtures('acoustid');
  const error = (code: number, message: string) => json(400, { status: 'error', error: { code, message } });
  const route = (request: RecordedRequest): FakeReply => {
    if (request.path !== '/v2/lookup') return { status: 404, headers: { 'Content-Type': 'text/html' }, body: '<h1>Not Found</h1>' };
    const { client, fingerprint, duration, format, maxdurationdiff } = request.query;
    if (format !== undefined && !FORMATS.has(format)) return error(1, `unknown format "${format}"`);
    if (client === undefined || client === '') return error(2, 'missing required parameter "client"');
    if (client !== ACOUSTID_KEY) return error(4, 'invalid API key');
    if (maxdurationdiff !== undefined) {
      const diff = pythonInt(maxdurationdiff);
      if (diff !== undefined && (diff < 1 || diff > MAX_ALLOWED_LENGTH_DIFF))
        return error(11, `parameter "maxdurationdiff" must be between 1 and ${MAX_ALLOWED_LENGTH_DIFF}`);
    }
    if (fingerprint === undefined && request.query.trackid === undefined) return error(2, 'missing required parameter "fingerprint"');
    if (!pythonInt(duration)) return error(2, 'missing required parameter "duration"');
    if (fingerprint === undefined || fingerprint === '') return error(2, 'missing required parameter "fingerprint"');
    if (fingerprintVersion(fingerprint) !== FINGERPRINT_VERSION) return error(3, 'invalid fingerprint');
    const name = FINGERPRINTS[fingerprint];
    return json(200, (name ? fixtures.get(name) : undefined) ?? { status: 'ok', results: [] });
  };
  return startFake('acoustid', route);
}
