import { field, json, loadFixtures, startFake, type FakeReply, type FakeServer, type RecordedRequest } from './fake-server';
import { HELP, incError, incSet, isNaturalOrAbsent, isValidIsrc, type LookupResource } from './musicbrainz-rules';

// MusicBrainz WS/2: lookups /ws/2/{recording,release,release-group,artist}/{mbid} and
// /ws/2/isrc/{isrc}, and search /ws/2/recording?query=. It refuses what the real service refuses,
// with its texts (rules and sources: ./musicbrainz-rules.ts): an `inc` the resource's validator
// does not list is 400, a malformed MBID is 400 "Invalid mbid.", a malformed ISRC 400 "Invalid
// isrc.", a search without `query` or with a non-numeric limit 400. Answers carry only what the
// `inc` asked for (a release group only with `release-groups`, genres only with `genres`, ...),
// as the real serializer does, so a client that forgets an inc does not get the data anyway.
// JSON only with fmt=json (XML otherwise); unknown ids 404; a search without hits is 200 with an
// empty list. Rate limit (https://wiki.musicbrainz.org/MusicBrainz_API/Rate_Limiting): one client
// above 10 requests in 10 seconds gets 503 until its rate drops.
// Fixtures: test/fixtures/musicbrainz/<case>.json hold the full records.

const MBID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RATE_WINDOW_MS = 10_000;
const RATE_MAX_REQUESTS = 10;
const RATE_LIMITED_TEXT =
  'Your requests are exceeding the allowable rate limit. Please see https://musicbrainz.org/doc/MusicBrainz_API/Rate_Limiting for more information.';

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
  /** Answers the fake refused with a 4xx other than 404, as `status text` lines (tests assert there are none). */
  refusals(): string[];
}

type Json = Record<string, unknown>;

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
  const refused: string[] = [];
  const admitted: number[] = [];
  const error = (status: number, text: string): FakeReply => {
    if (status !== 404) refused.push(`${status} ${text}`);
    return json(status, { error: text, help: HELP });
  };

  const route = (request: RecordedRequest): FakeReply => {
    while (admitted.length > 0 && (admitted[0] ?? 0) <= request.at - RATE_WINDOW_MS) admitted.shift();
    if (admitted.length >= RATE_MAX_REQUESTS) {
      refused.push(`503 rate limited`);
      return { status: 503, headers: { 'Content-Type': 'text/plain' }, body: RATE_LIMITED_TEXT };
    }
    admitted.push(request.at);

    const match = /^\/ws\/2\/(recording|release|release-group|artist|isrc)(?:\/([^/]+))?$/.exec(request.path);
    if (!match) return error(404, 'Not Found');
    if (request.query.fmt !== 'json') {
      return { status: 200, headers: { 'Content-Type': 'application/xml; charset=utf-8' }, body: '<?xml version="1.0" encoding="UTF-8"?><metadata/>' };
    }
    const [, entity = '', id] = match;
    if (id === undefined) {
      if (entity !== 'recording') return error(400, `The given parameters do not match any available query type for the ${entity} resource.`);
      const { query, limit, offset } = request.query;
      if (query === undefined || query === '') return error(400, 'The given parameters do not match any available query type for the recording resource.');
      if (!isNaturalOrAbsent(limit) || !isNaturalOrAbsent(offset)) return error(400, "The 'limit' and 'offset' parameters must be positive integers");
      const name = SEARCHES[query];
      const found = name ? fixtures.get(name) : undefined;
      return json(200, found ?? { created: new Date().toISOString(), count: 0, offset: 0, recordings: [] });
    }

    const resource = entity as LookupResource;
    const refusal = incError(resource, request.query.inc);
    if (refusal !== null) return error(400, refusal);
    const incs = incSet(request.query.inc);
    if (resource === 'isrc') {
      if (!isValidIsrc(id)) return error(400, 'Invalid isrc.');
      const found = byIsrc.get(id);
      if (!found) return error(404, 'Not Found');
      const recordings = field(found, 'recordings');
      return json(200, {
        ...(found as Json),
        recordings: (Array.isArray(recordings) ? recordings : []).map((recording: Json) => shapeRecording(recording, incs)),
      });
    }
    if (!MBID.test(id)) return error(400, 'Invalid mbid.');
    const found = byId.get(`${entity}/${id}`) as Json | undefined;
    if (!found) return error(404, 'Not Found');
    if (resource === 'recording') return json(200, shapeRecording(found, incs));
    if (resource === 'release') return json(200, shapeRelease(found, incs));
    if (resource === 'artist') return json(200, shapeArtist(found, incs));
    return json(200, found);
  };

  const fake = await startFake('musicbrainz', route);
  return {
    ...fake,
    baseUrl: `${fake.url}/ws/2`,
    calls: (prefix = '/ws/2') => fake.requests.filter((request) => request.path.startsWith(prefix)),
    refusals: () => [...refused],
    reset() {
      fake.reset();
      refused.length = 0;
    },
  };
}

/** Leaves out the keys whose inc was not asked for. */
function without(record: Json, drop: Record<string, boolean>): Json {
  return Object.fromEntries(Object.entries(record).filter(([key]) => drop[key] !== true));
}

function hasRelations(incs: Set<string>): boolean {
  return [...incs].some((inc) => inc.endsWith('-rels'));
}

function shapeRecording(recording: Json, incs: Set<string>): Json {
  const shaped = without(recording, {
    'artist-credit': !incs.has('artist-credits') && !incs.has('artists'),
    releases: !incs.has('releases'),
    isrcs: !incs.has('isrcs'),
    genres: !incs.has('genres'),
    tags: !incs.has('tags'),
    relations: !hasRelations(incs),
  });
  if (Array.isArray(shaped.releases)) {
    shaped.releases = (shaped.releases as Json[]).map((release) =>
      without(release, { 'release-group': !incs.has('release-groups'), 'artist-credit': !incs.has('artist-credits'), media: !incs.has('media') }),
    );
  }
  return shaped;
}

function shapeRelease(release: Json, incs: Set<string>): Json {
  return without(release, {
    'label-info': !incs.has('labels'),
    'release-group': !incs.has('release-groups'),
    genres: !incs.has('genres'),
    tags: !incs.has('tags'),
    media: !incs.has('media') && !incs.has('recordings'),
    'artist-credit': !incs.has('artist-credits') && !incs.has('artists'),
    relations: !hasRelations(incs),
  });
}

function shapeArtist(artist: Json, incs: Set<string>): Json {
  return without(artist, { genres: !incs.has('genres'), tags: !incs.has('tags'), relations: !hasRelations(incs), aliases: !incs.has('aliases') });
}
