import { startMusicBrainzFake, type MusicBrainzFake } from '../fakes/musicbrainz';
import { MASSIVE_ATTACK, MEZZANINE, TEARDROP, TEARDROP_ISRC } from '../fixtures/ids';

// The fakes refuse what the real services refuse. Each case restates a rule of the service's own
// code or documentation (cited per block), so a client request that passes here passes there.

async function get(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    // Not JSON (e.g. XML, plain text): the text itself is the body.
  }
  return { status: response.status, body };
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
    expect(answer).toEqual({ status: 400, body: { error: 'release-groups is not a valid inc parameter for the isrc resource.', help: 'For usage, please see: https://musicbrainz.org/development/mmd' } });
  });

  it('When /isrc is asked for genres, then it is 400 (ISRC.pm has no genres)', async () => {
    expect((await get(url(`isrc/${TEARDROP_ISRC}?inc=genres`))).body).toMatchObject({ error: 'genres is not a valid inc parameter for the isrc resource.' });
  });

  it('When an "extra" inc comes without the inc that enables it, then it is 400 naming the enabler; with it, 200', async () => {
    const alone = await get(url(`recording/${TEARDROP}?inc=discids`));
    expect(alone.status).toBe(400);
    expect(alone.body).toMatchObject({ error: 'discids is not a valid option for the inc parameter for the recording resource unless you specify one of the following other inc parameters: releases' });
    expect((await get(url(`recording/${TEARDROP}?inc=releases+discids`))).status).toBe(200);
  });

  it('When incs are joined by a space instead of +, then they are read the same', async () => {
    expect((await get(url(`artist/${MASSIVE_ATTACK}?inc=url-rels%20genres`))).status).toBe(200);
  });

  it('When a relationship inc is asked on a resource, then it is accepted; an inc of another resource is not', async () => {
    expect((await get(url(`artist/${MASSIVE_ATTACK}?inc=url-rels+genres`))).status).toBe(200);
    expect((await get(url(`artist/${MASSIVE_ATTACK}?inc=labels`))).body).toMatchObject({ error: 'labels is not a valid inc parameter for the artist resource.' });
  });

  it('When an ISRC or an MBID is malformed, then it is 400 "Invalid isrc." / "Invalid mbid."', async () => {
    expect(await get(url('isrc/gbaaa9800321'))).toMatchObject({ status: 400, body: { error: 'Invalid isrc.' } });
    expect(await get(url('recording/not-an-mbid'))).toMatchObject({ status: 400, body: { error: 'Invalid mbid.' } });
  });

  it('When a search has no query or a non-numeric limit, then it is 400', async () => {
    expect((await get(url('recording?limit=25'))).status).toBe(400);
    expect(await get(url('recording?query=x&limit=ten'))).toMatchObject({ status: 400, body: { error: "The 'limit' and 'offset' parameters must be positive integers" } });
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
