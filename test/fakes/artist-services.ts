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

// AcoustID v2 (https://acoustid.org/webservice): /v2/lookup by GET or form POST with client,
// meta, duration, fingerprint; errors are HTTP 400 `{"status": "error", "error": {code, message}}`.

export const ACOUSTID_KEY = 'acoustid-test-key';
/** Fingerprint -> lookup fixture. */
export const FINGERPRINTS: Record<string, string> = {
  'AQADtEmUaEkSRZEGAP4fHD4e4sePn8iR4_iRI0eOHzmO4_iR40eOHDly5MiRI0eOHDkA': 'lookup-teardrop',
};

export async function startAcoustIdFake(): Promise<FakeServer> {
  const fixtures = loadFixtures('acoustid');
  const error = (code: number, message: string) => json(400, { status: 'error', error: { code, message } });
  const route = (request: RecordedRequest): FakeReply => {
    if (request.path !== '/v2/lookup') return json(404, { status: 'error', error: { code: 1, message: 'unknown method' } });
    const { client, fingerprint, duration } = request.query;
    if (client === undefined || client === '') return error(2, 'missing required parameter "client"');
    if (client !== ACOUSTID_KEY) return error(4, 'invalid API key');
    if (fingerprint === undefined) return error(2, 'missing required parameter "fingerprint"');
    if (duration === undefined || !/^\d+$/.test(duration)) return error(2, 'missing required parameter "duration"');
    const name = FINGERPRINTS[fingerprint];
    return json(200, (name ? fixtures.get(name) : undefined) ?? { status: 'ok', results: [] });
  };
  return startFake('acoustid', route);
}
