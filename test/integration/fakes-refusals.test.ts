import { ACOUSTID_KEY, AUDIODB_KEY, FANART_KEY, FINGERPRINTS, startAcoustIdFake, startFanartTvFake, startTheAudioDbFake } from '../fakes/artist-services';
import { startCoverArtArchiveFake } from '../fakes/cover-art-archive';
import type { FakeServer } from '../fakes/fake-server';
import { startMusicBrainzFake, type MusicBrainzFake } from '../fakes/musicbrainz';
import { startWikidataFake } from '../fakes/wikimedia';
import {
  MASSIVE_ATTACK,
  MASSIVE_ATTACK_WIKIDATA,
  MEZZANINE,
  MUSIQUE,
  MUSIQUE_GROUP,
  MUSIQUE_OTHER_EDITION,
  TEARDROP,
  TEARDROP_ISRC,
  TEARDROP_SINGLE,
} from '../fixtures/ids';

// The fakes refuse what the real services refuse. Each case restates a rule of the service's own
// code or documentation (cited per block), so a client request that passes here passes there.

async function get(url: string, init: RequestInit = {}): Promise<{ status: number; body: unknown; location?: string | null }> {
  const response = await fetch(url, { redirect: 'manual', ...init });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    // Not JSON (e.g. XML, plain text): the text itself is the body.
  }
  return response.status >= 300 && response.status < 400
    ? { status: response.status, body, location: response.headers.get('location') }
    : { status: response.status, body };
}

// metabrainz/musicbrainz-server @ 11cd769a: lib/MusicBrainz/Server/WebService/Validator.pm
// (validate_inc, %extra_inc), Controller/WS/2/{ISRC,Recording,Release,Artist}.pm (inc lists),
// ControllerBase/WS/2.pm (_limit_and_offset), Validation.pm (is_valid_isrc, is_guid),
// WebService/JSONSerializer.pm (output_error: {"error", "help"}).
describe('MusicBrainz fake', () => {
  let mb: MusicBrainzFake;
  const url = (pathAndQuery: string) => `${mb.baseUrl}/${pathAndQuery}${pathAndQuery.includes('?') ? '&' : '?'}fmt=json`;
  beforeEach(async () => {
    // A fresh fake per test: its rate limit counts every request.
    mb = await startMusicBrainzFake();
  });
  afterEach(() => mb.close());

  it('When /isrc is asked for release-groups, then it is 400 with the validator text (the request svc used to send)', async () => {
    const answer = await get(url(`isrc/${TEARDROP_ISRC}?inc=artist-credits+releases+release-groups+isrcs`));
    expect(answer).toEqual({
      status: 400,
      body: {
        error: 'release-groups is not a valid inc parameter for the isrc resource.',
        help: 'For usage, please see: https://musicbrainz.org/development/mmd',
      },
    });
  });

  it('When /isrc is asked for genres, then it is 400 (ISRC.pm has no genres)', async () => {
    expect((await get(url(`isrc/${TEARDROP_ISRC}?inc=genres`))).body).toMatchObject({ error: 'genres is not a valid inc parameter for the isrc resource.' });
  });

  it('When an "extra" inc comes without the inc that enables it, then it is 400 naming the enabler; with it, 200', async () => {
    const alone = await get(url(`recording/${TEARDROP}?inc=discids`));
    expect(alone.status).toBe(400);
    expect(alone.body).toMatchObject({
      error:
        'discids is not a valid option for the inc parameter for the recording resource unless you specify one of the following other inc parameters: releases',
    });
    expect((await get(url(`recording/${TEARDROP}?inc=releases+discids`))).status).toBe(200);
  });

  it('When incs are joined by a space instead of +, then they are read the same', async () => {
    expect((await get(url(`artist/${MASSIVE_ATTACK}?inc=url-rels%20genres`))).status).toBe(200);
  });

  it('When a relationship inc is asked on a resource, then it is accepted; an inc of another resource is not', async () => {
    expect((await get(url(`artist/${MASSIVE_ATTACK}?inc=url-rels+genres`))).status).toBe(200);
    expect((await get(url(`artist/${MASSIVE_ATTACK}?inc=labels`))).body).toMatchObject({
      error: 'labels is not a valid inc parameter for the artist resource.',
    });
  });

  it('When an ISRC or an MBID is malformed, then it is 400 "Invalid isrc." / "Invalid mbid."', async () => {
    expect(await get(url('isrc/gbaaa9800321'))).toMatchObject({ status: 400, body: { error: 'Invalid isrc.' } });
    expect(await get(url('recording/not-an-mbid'))).toMatchObject({ status: 400, body: { error: 'Invalid mbid.' } });
  });

  it('When a search has no query or a non-numeric limit, then it is 400', async () => {
    expect((await get(url('recording?limit=25'))).status).toBe(400);
    expect(await get(url('recording?query=x&limit=ten'))).toMatchObject({
      status: 400,
      body: { error: "The 'limit' and 'offset' parameters must be positive integers" },
    });
  });

  it('When an inc is not asked for, then its data is not in the answer (release groups only with release-groups)', async () => {
    const isrc = await get(url(`isrc/${TEARDROP_ISRC}?inc=artist-credits+releases`));
    expect(isrc.status).toBe(200);
    const releases = (isrc.body as { recordings: { releases: Record<string, unknown>[] }[] }).recordings[0]?.releases ?? [];
    expect(releases.length).toBeGreaterThan(0);
    for (const release of releases) expect(release).not.toHaveProperty('release-group');
    const release = (await get(url(`release/${MEZZANINE}`))).body;
    expect(release).not.toHaveProperty('label-info');
    expect(release).not.toHaveProperty('genres');
  });

  it('When one client sends more than 10 requests within 10 s, then the rest are 503 (rate limit)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i += 1) statuses.push((await get(url(`artist/${MASSIVE_ATTACK}`))).status);
    expect(statuses).toEqual([...Array<number>(10).fill(200), 503, 503]);
  });
});

// metabrainz/coverart_redirect @ 90ff5c7b: artwork_redirect/request.py, artwork_redirect/server.py.
describe('Cover Art Archive fake', () => {
  let caa: FakeServer;
  const images = 'http://images.invalid';
  beforeAll(async () => {
    caa = await startCoverArtArchiveFake(images);
  });
  afterAll(() => caa.close());

  it('When a release front thumbnail is asked, then it is 307 to archive.org naming the release, the image id and the _thumb size', async () => {
    const answer = await get(`${caa.url}/release/${MEZZANINE}/front-1200`);
    expect(answer.status).toBe(307);
    expect(answer.location).toMatch(new RegExp(`^${images}/download/mbid-${MEZZANINE}/mbid-${MEZZANINE}-\\d+_thumb1200\\.jpg$`));
    expect((await get(`${caa.url}/release/${MEZZANINE}/front`)).location).toMatch(/-\d+\.jpg$/);
  });

  it('When a release group front is asked, then it redirects to the front image of the release the group uses', async () => {
    const answer = await get(`${caa.url}/release-group/${MUSIQUE_GROUP}/front-500`);
    expect(answer.location).toMatch(new RegExp(`/mbid-${MUSIQUE_OTHER_EDITION}/mbid-${MUSIQUE_OTHER_EDITION}-\\d+_thumb500\\.jpg$`));
  });

  it('When there is no front image, then it is 404; a release group only serves front images (400 otherwise)', async () => {
    expect((await get(`${caa.url}/release/${TEARDROP_SINGLE}/front-1200`)).status).toBe(404);
    expect((await get(`${caa.url}/release/${MUSIQUE}/front-1200`)).status).toBe(404);
    expect(await get(`${caa.url}/release-group/${MUSIQUE_GROUP}/back`)).toMatchObject({ status: 400, body: '<p>back not supported for release groups.</p>' });
  });

  it('When the entity or the MBID is malformed (upper case included), then it is 400', async () => {
    expect((await get(`${caa.url}/recording/${TEARDROP}/front`)).status).toBe(400);
    expect((await get(`${caa.url}/release/${MEZZANINE.toUpperCase()}/front`)).status).toBe(400);
  });

  it('When a release is asked without a file, then it is 307 to its index.json on archive.org', async () => {
    expect((await get(`${caa.url}/release/${MEZZANINE}/`)).location).toBe(`${images}/download/mbid-${MEZZANINE}/index.json`);
  });
});

// acoustid/acoustid-server @ 376a8237: acoustid/api/v2/__init__.py, acoustid/api/errors.py,
// acoustid/data/fingerprint.py, acoustid/const.py.
describe('AcoustID fake', () => {
  let acoustid: FakeServer;
  const fingerprint = Object.keys(FINGERPRINTS)[0] ?? '';
  const lookup = (params: Record<string, string>) =>
    get(`${acoustid.url}/v2/lookup`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    });
  beforeAll(async () => {
    acoustid = await startAcoustIdFake();
  });
  afterAll(() => acoustid.close());

  it('When client, duration and fingerprint are valid (form POST), then the answer is ok', async () => {
    expect(await lookup({ client: ACOUSTID_KEY, meta: 'recordings', duration: '330', fingerprint, format: 'json' })).toMatchObject({
      status: 200,
      body: { status: 'ok' },
    });
  });

  it('When a parameter breaks a rule, then it is 400 with the code and text of errors.py', async () => {
    const cases: [Record<string, string>, number, string][] = [
      [{ duration: '330', fingerprint }, 2, 'missing required parameter "client"'],
      [{ client: 'nope', duration: '330', fingerprint }, 4, 'invalid API key'],
      [{ client: ACOUSTID_KEY, duration: '330', fingerprint, format: 'yaml' }, 1, 'unknown format "yaml"'],
      [{ client: ACOUSTID_KEY, fingerprint }, 2, 'missing required parameter "duration"'],
      [{ client: ACOUSTID_KEY, duration: '330.5', fingerprint }, 2, 'missing required parameter "duration"'],
      [{ client: ACOUSTID_KEY, duration: '330' }, 2, 'missing required parameter "fingerprint"'],
      [{ client: ACOUSTID_KEY, duration: '330', fingerprint: 'not a fingerprint' }, 3, 'invalid fingerprint'],
      [{ client: ACOUSTID_KEY, duration: '330', fingerprint, maxdurationdiff: '31' }, 11, 'parameter "maxdurationdiff" must be between 1 and 30'],
    ];
    for (const [params, code, message] of cases) {
      expect(await lookup(params)).toEqual({ status: 400, body: { status: 'error', error: { code, message } } });
    }
  });
});

// wikimedia/mediawiki-extensions-Wikibase @ 0122c931: repo/includes/Api/GetEntities.php.
describe('Wikidata fake', () => {
  let wikidata: FakeServer;
  const api = (query: string) => get(`${wikidata.url}/w/api.php?${query}`);
  beforeAll(async () => {
    wikidata = await startWikidataFake();
  });
  afterAll(() => wikidata.close());

  it('When ids and props are valid, then the entity has only what props asked for', async () => {
    const answer = await api(`action=wbgetentities&ids=${MASSIVE_ATTACK_WIKIDATA}&props=descriptions&languages=en&format=json`);
    const entity = (answer.body as { entities: Record<string, Record<string, unknown>> }).entities[MASSIVE_ATTACK_WIKIDATA];
    expect(entity).toHaveProperty('descriptions');
    expect(entity).not.toHaveProperty('claims');
  });

  it('When neither ids nor sites+titles are given, then it is the error param-missing; a malformed id is no-such-entity; an unknown one is "missing"', async () => {
    expect((await api('action=wbgetentities&format=json')).body).toMatchObject({ error: { code: 'param-missing' } });
    expect((await api('action=wbgetentities&ids=Massive&format=json')).body).toMatchObject({ error: { code: 'no-such-entity' } });
    expect((await api('action=wbgetentities&ids=Q999999999&format=json')).body).toMatchObject({ entities: { Q999999999: { id: 'Q999999999', missing: '' } } });
  });

  it('When a prop value or a parameter is unknown, then it is dropped with a warning, not an error', async () => {
    const answer = await api(`action=wbgetentities&ids=${MASSIVE_ATTACK_WIKIDATA}&props=claims|pictures&colour=blue&format=json`);
    expect(answer.body).toMatchObject({ success: 1 });
    expect(JSON.stringify(answer.body)).toContain('Unrecognized parameter: colour.');
    expect(JSON.stringify(answer.body)).toContain('Unrecognized value for parameter \\"props\\": pictures');
  });

  it('When format=json is missing, then the answer is the HTML page, not JSON', async () => {
    expect(typeof (await api(`action=wbgetentities&ids=${MASSIVE_ATTACK_WIKIDATA}`)).body).toBe('string');
  });
});

// fanart.tv v3 (closed source; https://fanarttv.docs.apiary.io): /v3/music/{artist mbid} and
// /v3/music/albums/{release-group mbid} with api_key; 404 {"status":"error","error message":"Not found"}
// when it has no images of that id. TheAudioDB (https://www.theaudiodb.com/free_music_api): an unknown
// artist is 200 {"artists": null}.
describe('fanart.tv and TheAudioDB fakes', () => {
  let fanart: FakeServer;
  let audiodb: FakeServer;
  beforeAll(async () => {
    fanart = await startFanartTvFake('http://images.invalid');
    audiodb = await startTheAudioDbFake('http://images.invalid');
  });
  afterAll(async () => {
    await fanart.close();
    await audiodb.close();
  });

  it('When fanart.tv has no images of an artist or album, then it is 404 "Not found"; both endpoints answer known ids', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(await get(`${fanart.url}/v3/music/${unknown}?api_key=${FANART_KEY}`)).toEqual({
      status: 404,
      body: { status: 'error', 'error message': 'Not found' },
    });
    expect((await get(`${fanart.url}/v3/music/albums/${unknown}?api_key=${FANART_KEY}`)).status).toBe(404);
    expect((await get(`${fanart.url}/v3/music/${MASSIVE_ATTACK}?api_key=${FANART_KEY}`)).status).toBe(200);
    expect((await get(`${fanart.url}/v3/music/albums/${MUSIQUE_GROUP}?api_key=${FANART_KEY}`)).status).toBe(200);
  });

  it('When TheAudioDB does not know an artist, then it is 200 {"artists": null}', async () => {
    expect(await get(`${audiodb.url}/api/v1/json/${AUDIODB_KEY}/search.php?s=nobody%20at%20all`)).toEqual({ status: 200, body: { artists: null } });
    expect(await get(`${audiodb.url}/api/v1/json/${AUDIODB_KEY}/artist-mb.php?i=00000000-0000-4000-8000-000000000000`)).toEqual({
      status: 200,
      body: { artists: null },
    });
  });
});
