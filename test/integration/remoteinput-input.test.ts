import { asObject, getWithQuery, postJson, request } from '../helpers/http';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { storedCount } from '../helpers/stored-count';

describe('/v1/remoteinput input handling', () => {
  let t: TestServer;
  beforeAll(async () => {
    // Input handling, not play semantics: the same artist and title again is a new record here.
    t = await startTestServer({ config: { maxBodyBytes: 256 * 1024, dedupeSeconds: 0 } });
  });
  afterAll(() => t.close());

  const url = () => `${t.url}/v1/remoteinput`;

  /** Asserts a JSON error with the status and that nothing was stored. */
  async function expectRejected(send: () => Promise<{ status: number; json: unknown }>, status: number): Promise<string> {
    const before = await storedCount(t.server.tracks);
    const res = await send();
    expect(res.status).toBe(status);
    const { error } = asObject(res.json);
    expect(typeof error).toBe('string');
    expect(await storedCount(t.server.tracks)).toBe(before);
    return error as string;
  }

  it('When the JSON body is invalid, then 400 and nothing is stored', async () => {
    expect(await expectRejected(() => postJson(url(), '{"artist": "A",'), 400)).toMatch(/Invalid JSON/);
  });

  it.each(['', '[{"artist":"A"}]', '"artist"', '42', 'null', 'true'])('When the body is %p (not an object), then 400', async (body) => {
    await expectRejected(() => postJson(url(), body), 400);
  });

  it('When the body is over maxBodyBytes, then 413', async () => {
    const error = await expectRejected(() => postJson(url(), { artist: 'A', comments: 'x'.repeat(300 * 1024) }), 413);
    expect(error).toMatch(/too large/);
  });

  it('When the body is over the limit and sent chunked (no Content-Length), then 413 as well', async () => {
    const big = JSON.stringify({ artist: 'A', comments: 'x'.repeat(300 * 1024) });
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const res = await fetch(url(), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: stream, duplex: 'half' });
    expect(res.status).toBe(413);
  });

  it('When a field has 100,000 characters, then it is truncated to 1,000 with the warning of docs/limits-and-load.md', async () => {
    const res = await postJson(url(), { artist: 'A', title: 't'.repeat(100_000) });
    expect(res.status).toBe(200);
    const body = asObject(res.json);
    expect(asObject(body.processed_metadata).title).toBe('t'.repeat(1000));
    expect(body.warnings).toEqual(["Field 'title' truncated from 100000 to 1000 characters"]);
  });

  it('When 1,500 emoji are sent, then 1,000 code points come back and no lone surrogate', async () => {
    const res = await postJson(url(), { artist: 'A', title: '🎶'.repeat(1500) });
    const title = asObject(asObject(res.json).processed_metadata).title as string;
    expect(Array.from(title)).toHaveLength(1000);
    expect(title.isWellFormed()).toBe(true);
    expect(asObject(res.json).warnings).toEqual(["Field 'title' truncated from 1500 to 1000 characters"]);
  });

  it('When no warning occurred, then the response has no warnings key', async () => {
    const res = await postJson(url(), { artist: 'A', title: 'Clean' });
    expect(Object.keys(asObject(res.json)).sort()).toEqual(['dbid', 'processed_metadata']);
  });

  it('When system fields, binary fields, __proto__ and data: URIs are sent, then none of them is stored or echoed', async () => {
    const body =
      '{"artist":"A","title":"T","hostname":"dj","hostfqdn":"dj.lan","hostip":"10.0.0.5","ipaddress":"10.0.0.5","httpport":8899,' +
      '"dbid":99,"filename":"/m/a.mp3","previoustrack":"x","cache_warmed":true,"track_received":"now","version":"9","coverimagetype":"png",' +
      '"coverimageraw":"AAAA","artistthumbnailbase64":"AAAA","__proto__":{"polluted":1},"constructor":"x","prototype":"y",' +
      '"comments":"data:text/plain,hi"}';
    const res = await postJson(url(), body);
    expect(res.status).toBe(200);
    const { dbid, processed_metadata } = asObject(res.json);
    expect(processed_metadata).toEqual({ artist: 'A', title: 'T' });
    expect(dbid).not.toBe(99);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('When numbers come as strings over GET, then they are stored as numbers', async () => {
    const res = await getWithQuery(url(), { artist: 'A', title: 'T', bpm: '128', duration: '215.5', bitrate: '320', samplerate: '44100' });
    expect(asObject(asObject(res.json).processed_metadata)).toEqual({ artist: 'A', title: 'T', bpm: 128, duration: 215.5, bitrate: 320, samplerate: 44100 });
  });

  it.each(['NaN', 'Infinity', '1e400', '-Infinity'])('When bpm is %s, then it is dropped with a warning and the rest is stored', async (bpm) => {
    const res = await getWithQuery(url(), { artist: 'A', title: 'T', bpm });
    expect(res.status).toBe(200);
    expect(asObject(res.json).processed_metadata).toEqual({ artist: 'A', title: 'T' });
    expect(asObject(res.json).warnings).toEqual(["Field 'bpm' dropped: not a finite number"]);
  });

  it('When a JSON number overflows (1e400), then it is dropped with a warning, never a 500', async () => {
    const res = await postJson(url(), '{"artist":"A","duration":1e400,"loudness":-1e400}');
    expect(res.status).toBe(200);
    expect(asObject(res.json).warnings).toEqual(["Field 'duration' dropped: not a finite number", "Field 'loudness' dropped: not a finite number"]);
  });

  it('When nested objects are sent, then they are dropped with a warning', async () => {
    const res = await postJson(url(), { artist: 'A', title: 'T', extra: { nested: { deep: true } }, list: [1, 2] });
    expect(asObject(res.json).processed_metadata).toEqual({ artist: 'A', title: 'T' });
    expect(asObject(res.json).warnings).toHaveLength(2);
  });

  it('When a query key is repeated, then 400 and nothing is stored', async () => {
    await expectRejected(() => request(`${url()}?artist=A&artist=B`), 400);
  });

  it.each([{}, { album: 'Only album' }, { artist: '', title: '   ' }, { fpcalcfingerprint: 'AQAA' }, { artist: '\0\0' }])(
    'When no identifying field is present (%p), then 400 says which fields are needed',
    async (fields) => {
      expect(await expectRejected(() => postJson(url(), fields), 400)).toMatch(/artist, title, isrc, musicbrainzrecordingid/);
    },
  );

  it('When only isrc, a recording id, or the fingerprint pair is sent, then it is accepted', async () => {
    for (const fields of [{ isrc: 'GBDUW0000059' }, { musicbrainzrecordingid: '1a2b' }, { fpcalcfingerprint: 'AQAA', fpcalcduration: '212' }]) {
      expect((await postJson(url(), fields)).status).toBe(200);
    }
  });

  it('When the body is text/plain or has no Content-Type but is JSON, then it is accepted', async () => {
    const plain = await request(url(), { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{"artist":"Plain"}' });
    expect(plain.status).toBe(200);
    const untyped = await request(url(), { method: 'POST', body: new Blob(['{"artist":"Untyped"}']) });
    expect(untyped.status).toBe(200);
    expect(asObject(asObject(untyped.json).processed_metadata).artist).toBe('Untyped');
  });

  it('When the body is form-encoded, then it is read like query parameters', async () => {
    const res = await request(url(), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'artist=Form&title=Body&bpm=120',
    });
    expect(asObject(res.json).processed_metadata).toEqual({ artist: 'Form', title: 'Body', bpm: 120 });
  });

  it('When the content type is something else, then 415', async () => {
    await expectRejected(() => request(url(), { method: 'POST', headers: { 'Content-Type': 'application/xml' }, body: '<a/>' }), 415);
  });

  it('When a coverurl is submitted, then it is never echoed back as sent', async () => {
    const res = await postJson(url(), { artist: 'A', coverurl: 'http://203.0.113.9/cover.jpg' });
    expect(res.text).not.toContain('203.0.113.9');
  });
});
