import { asObject, getWithQuery, postJson, request } from '../helpers/http';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { storedCount } from '../helpers/stored-count';
import { withoutPlayFields } from '../helpers/play-fields';

// What's Now Playing's Remote Output plugin, as it really behaves
// (whatsnowplaying/whats-now-playing, nowplaying/notifications/remote.py): it POSTs the track as
// JSON (aiohttp `json=`) to /v1/remoteinput with the secret in the X-WNP-Client-Auth header
// (nowplaying/webserver/auth.py CLIENT_AUTH_HEADER), after removing the blob fields and a few
// host fields; it adds `remote_charts_submitted: true` when it submitted to charts itself, and
// on 200 it reads `dbid` from the answer. The field types are those of its TrackMetadata
// (nowplaying/types.py): `isrc`, `musicbrainzartistid`, `artistwebsites` (and `genres`,
// nowplaying/db.py LISTFIELDS) are lists of strings, `duration` is an int, `track`,
// `track_total`, `disc`, `disc_total` and `bpm` are strings, `has_video` a bool.

const SECRET = 'wnp-secret';

/** A track the way the plugin sends it after stripping its blobs. */
function wnpTrack(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    artist: 'Daft Punk',
    title: 'One More Time',
    album: 'Discovery',
    duration: 320,
    track: '1',
    track_total: '14',
    disc: '1',
    disc_total: '1',
    bpm: '123',
    deck: '2B',
    has_video: false,
    isrc: ['GBDUW0000053', 'FRZ110000170'],
    musicbrainzartistid: ['056e4f3e-d505-4dad-8ec1-d04f521cbb56'],
    artistwebsites: ['https://www.daftpunk.com/', 'https://twitter.com/daftpunk'],
    genres: ['french house', 'house'],
    source_agent_name: 'whats-now-playing',
    remote_charts_submitted: true,
    ...overrides,
  };
}

describe("What's Now Playing Remote Output on /v1/remoteinput", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { secret: SECRET } });
  });
  afterAll(() => t.close());

  const url = () => `${t.url}/v1/remoteinput`;
  const auth = { 'X-WNP-Client-Auth': SECRET };

  it('When the plugin posts a track with its list fields, deck label and totals, then everything is kept with the right types and no warning', async () => {
    const res = await postJson(url(), wnpTrack(), auth);
    expect(res.status).toBe(200);
    const body = asObject(res.json);
    expect(typeof body.dbid).toBe('number');
    expect(body.warnings).toBeUndefined();
    const expected = {
      artist: 'Daft Punk',
      title: 'One More Time',
      album: 'Discovery',
      duration: 320,
      track: 1,
      track_total: 14,
      disc: 1,
      disc_total: 1,
      bpm: 123,
      deck: '2B',
      has_video: false,
      isrc: ['GBDUW0000053', 'FRZ110000170'],
      musicbrainzartistid: ['056e4f3e-d505-4dad-8ec1-d04f521cbb56'],
      artistwebsites: ['https://www.daftpunk.com/', 'https://twitter.com/daftpunk'],
      genres: ['french house', 'house'],
      source_agent_name: 'whats-now-playing',
      remote_charts_submitted: true,
    };
    expect(body.processed_metadata).toEqual(expected);
    const last = await request(`${t.url}/v1/last`);
    expect(withoutPlayFields(last.json)).toEqual({ dbid: body.dbid, ...expected });
  });

  it('When the server restarts, then the stored lists are still lists', async () => {
    const res = await postJson(url(), wnpTrack({ title: 'Aerodynamic' }), auth);
    await t.restart();
    const last = asObject((await request(`${t.url}/v1/last`)).json);
    expect(last.dbid).toBe(asObject(res.json).dbid);
    expect(last.isrc).toEqual(['GBDUW0000053', 'FRZ110000170']);
    expect(last.genres).toEqual(['french house', 'house']);
  });

  it('When a track is identified only by an isrc list, then it is stored; an isrc list that cleans to nothing is a 400', async () => {
    const ok = await postJson(url(), { isrc: ['GBDUW0000053'] }, auth);
    expect(ok.status).toBe(200);
    expect(asObject(ok.json).processed_metadata).toEqual({ isrc: ['GBDUW0000053'] });
    const before = await storedCount(t.server.tracks);
    const empty = await postJson(url(), { isrc: ['', '  '], genres: ['house'] }, auth);
    expect(empty.status).toBe(400);
    expect(await storedCount(t.server.tracks)).toBe(before);
  });

  it('When a list element is too long or the list holds a non-string, then the element is cut with the documented warning, the bad list dropped with one', async () => {
    const res = await postJson(url(), { artist: 'A', isrc: ['x'.repeat(1200)], genres: ['house', 7] }, auth);
    expect(res.status).toBe(200);
    const body = asObject(res.json);
    expect(body.processed_metadata).toEqual({ artist: 'A', isrc: ['x'.repeat(1000)] });
    expect(body.warnings).toEqual(["Field 'isrc' truncated from 1200 to 1000 characters", "Field 'genres' dropped: a list may hold only text"]);
  });

  it('When a URL template leaves numeric fields blank (bpm=), then they are dropped without a warning', async () => {
    const res = await getWithQuery(url(), { artist: 'A', title: 'T', bpm: '', duration: '', track_total: '', secret: SECRET });
    expect(res.status).toBe(200);
    const body = asObject(res.json);
    expect(body.processed_metadata).toEqual({ artist: 'A', title: 'T' });
    expect(body.warnings).toBeUndefined();
  });

  it("When curl -d '{...}' sends a JSON object labelled form-encoded, then it is read as JSON, & and = included", async () => {
    const json = JSON.stringify({ artist: 'Simon & Garfunkel', title: 'a=b', bpm: '90', secret: SECRET });
    const res = await request(url(), { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: json });
    expect(res.status).toBe(200);
    expect(asObject(res.json).processed_metadata).toEqual({ artist: 'Simon & Garfunkel', title: 'a=b', bpm: 90 });
  });

  it('When a form body is a real form (or a broken JSON object), then it is read as a form', async () => {
    const form = await request(url(), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-WNP-Client-Auth': SECRET },
      body: 'artist=Moderat&title=Bad+Kingdom',
    });
    expect(asObject(form.json).processed_metadata).toEqual({ artist: 'Moderat', title: 'Bad Kingdom' });
    const broken = await request(url(), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-WNP-Client-Auth': SECRET },
      body: '{"artist":"A"',
    });
    // Read as a form, it is one field with a strange name and no value: nothing identifies it.
    expect(broken.status).toBe(400);
  });
});
