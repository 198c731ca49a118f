import { field, json, loadFixtures, startFake, type FakeReply, type FakeServer, type RecordedRequest } from './fake-server';

// MusicBrainz WS/2 as documented (https://musicbrainz.org/doc/MusicBrainz_API): lookups
// /ws/2/{recording,release,artist}/{mbid}, /ws/2/isrc/{isrc}, and search /ws/2/recording?query=.
// JSON only with fmt=json (XML otherwise); unknown MBIDs 404, malformed ones 400; a search
// without hits is 200 with an empty list. Fixtures: test/fixtures/musicbrainz/<case>.json.

const HELP = 'For usage, please see: https://musicbrainz.org/development/mmd';
const MBID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Lucene queries svc sends -> search fixture (the fake does not implement Lucene). */
const SEARCHES: Record<string, string> = {
  'recording:"Teardrop" AND artist:"Massive Attack"': 'search-teardrop',
  'recording:"One More Time" AND artist:"Daft Punk" AND release:"Musique Vol. 1"': 'search-one-more-time-musique',
  'recording:"Glory Box" AND artist:"Portishead"': 'search-glory-box-weak',
};

export interface MusicBrainzFake extends FakeServer {
  baseUrl: string;
  /** Requests under /ws/2 whose path starts with `prefix` (e.g. "/ws/2/recording"). */
  calls(prefix?: string): RecordedRequest[];
}

export async function startMusicBrainzFake(): Promise<MusicBrainzFake> {
  const fixtures = loadFixtures('musicbrainz');
  const byId = new Map<string, unknown>();
  const byIsrc = new Map<string, unknown>();
  for (const [name, body] of fixtures) {
    const id = field(body, 'id');
    if (typeof id === 'string') byId.set(`${name.split('-')[0]}/${id}`, body);
    const isrc = field(body, 'isrc');
    if (name.startsWith('isrc-') && typeof isrc === 'string') byIsrc.set(isrc, body);
  }

  const route = (request: RecordedRequest): FakeReply => {
    const match = /^\/ws\/2\/(recording|release|artist|isrc)(?:\/([^/]+))?$/.exec(request.path);
    if (!match) return json(404, { error: 'Not Found', help: HELP });
    if (request.query.fmt !== 'json') {
      return { status: 200, headers: { 'Content-Type': 'application/xml; charset=utf-8' }, body: '<?xml version="1.0" encoding="UTF-8"?><metadata/>' };
    }
    const [, entity, id] = match;
    if (entity === 'recording' && id === undefined) {
      const name = SEARCHES[request.query.query ?? ''];
      const found = name ? fixtures.get(name) : undefined;
      return json(200, found ?? { created: new Date().toISOString(), count: 0, offset: 0, recordings: [] });
    }
    if (entity === 'isrc') {
      const found = byIsrc.get(id ?? '');
      return found ? json(200, found) : json(404, { error: 'Not Found', help: HELP });
    }
    if (!MBID.test(id ?? '')) return json(400, { error: 'Invalid mbid.', help: HELP });
    const found = byId.get(`${entity}/${id}`);
    return found ? json(200, found) : json(404, { error: 'Not Found', help: HELP });
  };

  const fake = await startFake('musicbrainz', route);
  return {
    ...fake,
    baseUrl: `${fake.url}/ws/2`,
    calls: (prefix = '/ws/2') => fake.requests.filter((request) => request.path.startsWith(prefix)),
  };
}
