import { startFake } from '../fakes/fake-server';
import { enrichmentConfig, startFakeServices, type FakeServices } from '../fakes/services';
import { MASSIVE_ATTACK, MEZZANINE, MUSIQUE, ONE_MORE_TIME, TEARDROP } from '../fixtures/ids';
import { eventually, until } from '../helpers/eventually';
import { ManualLimiterClock } from '../helpers/limiter-clock';
import { asObject, postJson, request } from '../helpers/http';
import { startTestServer, type TestServer } from '../helpers/test-server';
import type { Config } from '../../src/config/schema';
import type { DeepPartial } from '../helpers/test-server';

// POST /v1/remoteinput with enrichment on, against the fakes: what the response carries, what
// is cached, which outside calls are made, and how outside failures degrade the answer.

/** MusicBrainz failed: none of its fields, nor the cover (which needs its release); TheAudioDB's name search may still add a biography. */
function expectNoMusicBrainzFields(metadata: Record<string, unknown>): void {
  for (const field of ['album', 'musicbrainzrecordingid', 'musicbrainzalbumid', 'label', 'artistwebsites']) expect(metadata[field]).toBeUndefined();
  expect(metadata).toMatchObject({ artist: 'Massive Attack', title: 'Teardrop' });
}

describe('POST /v1/remoteinput with enrichment', () => {
  let fakes: FakeServices;
  let server: TestServer | undefined;

  const start = async (enrichment: DeepPartial<Config['enrichment']> = {}, enrichmentClock?: ManualLimiterClock) => {
    server = await startTestServer({ config: enrichmentConfig(fakes, enrichment), enrichmentClock });
    return server;
  };
  const submit = async (body: Record<string, unknown>) => {
    if (!server) throw new Error('no server');
    const response = await postJson(`${server.url}/v1/remoteinput`, body);
    expect(response.status).toBe(200);
    return asObject(asObject(response.json).processed_metadata);
  };

  beforeAll(async () => {
    fakes = await startFakeServices();
  });
  afterAll(() => fakes.close());
  beforeEach(() => fakes.reset());
  afterEach(async () => {
    // Background image downloads finish first: a request cut off by the close could still reach
    // a fake after the next test reset it.
    await server?.server.images.idle();
    await server?.close();
    server = undefined;
  });

  describe('response', () => {
    it('When a known track is submitted, then the album release, biography and sources are in processed_metadata and the submitter keeps its fields', async () => {
      await start();
      const metadata = await submit({ artist: 'Massive Attack', title: 'Teardrop', genre: 'Downtempo' });
      expect(metadata).toMatchObject({
        artist: 'Massive Attack',
        title: 'Teardrop',
        genre: 'Downtempo',
        album: 'Mezzanine',
        date: '1998-04-20',
        label: 'Circa',
        musicbrainzrecordingid: TEARDROP,
        musicbrainzartistid: MASSIVE_ATTACK,
        musicbrainzalbumid: MEZZANINE,
        artistshortbio: 'English trip hop group',
      });
      expect(String(metadata.artistlongbio)).toContain('formed in 1988 in Bristol');
      expect(metadata.enrichment_sources).toMatchObject({ album: 'musicbrainz', label: 'musicbrainz', artistshortbio: 'wikidata', artistlongbio: 'wikipedia' });
      expect(asObject(metadata.enrichment_sources).genre).toBeUndefined();
      expect(asObject(metadata.enrichment_sources).artist).toBeUndefined();

      // GET /v1/last serves the same enriched record.
      const last = asObject((await request(`${server?.url}/v1/last`)).json);
      expect(last.album).toBe('Mezzanine');

      // Outside calls: MusicBrainz three times (search, release, artist), one cover lookup, each artist provider.
      expect(fakes.all().map((call) => call.service)).toEqual(
        expect.arrayContaining(['musicbrainz', 'coverartarchive', 'wikidata', 'wikipedia', 'theaudiodb', 'fanarttv']),
      );
      // Search, release, artist, then the recording's works (docs/play-log.md "Rights data").
      expect(fakes.musicbrainz.calls()).toHaveLength(4);
      expect(fakes.acoustid.requests).toHaveLength(0);
      // The enrichment client never downloads the images it found (the image store does, asking for images, not JSON).
      expect(fakes.imageHost.requests.filter((call) => call.headers.accept?.includes('application/json'))).toHaveLength(0);

      // Cache: the same track again makes no outside request, even after a restart.
      fakes.reset();
      const again = await submit({ artist: 'Massive Attack', title: 'Teardrop', genre: 'Downtempo' });
      expect(again.album).toBe('Mezzanine');
      expect(again.enrichment_sources).toEqual(metadata.enrichment_sources);
      await server?.restart();
      const afterRestart = await submit({ artist: 'Massive Attack', title: 'Teardrop' });
      expect(afterRestart.label).toBe('Circa');
      expect(fakes.all().filter((call) => call.service !== 'image-host')).toEqual([]);
      // The images the first server had not finished are fetched now; none may reach the next test.
      await server?.server.images.idle();
    });

    it('When the search finds only a weak match, then nothing is filled and no MusicBrainz lookup, cover or Wikidata request follows', async () => {
      await start();
      const metadata = await submit({ artist: 'Portishead', title: 'Glory Box' });
      expect(metadata).toEqual({ artist: 'Portishead', title: 'Glory Box' });
      // Only the search, and TheAudioDB's artist search by name (which knows no Portishead here).
      expect(
        fakes
          .all()
          .map((call) => `${call.service} ${call.path}`)
          .sort(),
      ).toEqual(['musicbrainz /ws/2/recording', 'theaudiodb /api/v1/json/123/search.php']);
    });
  });

  describe('coalescing', () => {
    it('When 100 submissions of the same unseen track arrive at once, then each endpoint is asked once', async () => {
      await start();
      const track = { artist: 'Daft Punk', title: 'One More Time', album: 'Musique Vol. 1' };
      const results = await Promise.all(Array.from({ length: 100 }, () => submit(track)));
      for (const metadata of results) expect(metadata).toMatchObject({ musicbrainzrecordingid: ONE_MORE_TIME, musicbrainzalbumid: MUSIQUE, label: 'Virgin' });

      const calls = fakes.all().filter((call) => call.service !== 'image-host');
      const endpoints = calls.map((call) => `${call.service} ${call.path}`);
      expect(new Set(endpoints).size).toBe(endpoints.length);
      // Search, release, artist, then the recording's works (docs/play-log.md "Rights data").
      expect(fakes.musicbrainz.calls()).toHaveLength(4);
    });
  });

  describe('deadline', () => {
    it('When a service is slower than the deadline, then the response comes at the deadline with what arrived in time', async () => {
      // Wikipedia hangs: MusicBrainz, the cover and TheAudioDB's biography still make it.
      fakes.wikipedia.override(() => ({ status: 200, body: '{}', delayMs: 30_000 }));
      await start({ deadlineSeconds: 4 });
      // Wikipedia would answer after 30 s: the answer with the rest, and the log line, show the deadline fired.
      const metadata = await submit({ artist: 'Massive Attack', title: 'Teardrop' });
      expect(metadata).toMatchObject({ album: 'Mezzanine', label: 'Circa', artistshortbio: 'English trip hop group' });
      expect(asObject(metadata.enrichment_sources).artistlongbio).toBe('theaudiodb');
      expect(server?.logs.join('\n')).toContain('deadline of 4000 ms reached');
    });

    it('When MusicBrainz does not answer within the deadline, then the submission is stored unenriched', async () => {
      fakes.musicbrainz.override(() => ({ status: 200, body: '{}', delayMs: 30_000 }));
      await start({ deadlineSeconds: 1 });
      // MusicBrainz would answer after 30 s, past the test's own timeout: an answer at all is the deadline firing.
      expect(await submit({ artist: 'Massive Attack', title: 'Teardrop' })).toEqual({ artist: 'Massive Attack', title: 'Teardrop' });
      expect(server?.logs.join('\n')).toContain('deadline of 1000 ms reached');
    });
  });

  describe('outside failures', () => {
    it('When MusicBrainz answers 500, then the submission succeeds unenriched, a warning is logged, and MusicBrainz is left alone for a while (negative cache)', async () => {
      fakes.musicbrainz.override(() => ({ status: 500, headers: { 'Content-Type': 'text/html' }, body: '<h1>Internal Server Error</h1>' }));
      await start();
      expectNoMusicBrainzFields(await submit({ artist: 'Massive Attack', title: 'Teardrop' }));
      expect(server?.logs.join('\n')).toMatch(/warn enrichment: musicbrainz failed: musicbrainz: HTTP 500/);
      // Another track: the failed service is skipped, not asked again (docs/title-first.md "Negative cache").
      expect((await submit({ artist: 'Daft Punk', title: 'One More Time' })).musicbrainzrecordingid).toBeUndefined();
      expect(fakes.musicbrainz.calls()).toHaveLength(1);
      expect(server?.logs.join('\n')).toMatch(/musicbrainz: skipped for \d+ s more after a failure/);
      expect(asObject((await request(`${server?.url}/v1/status`)).json).failing_services).toEqual(['musicbrainz']);
    });

    it('When MusicBrainz answers 503 with Retry-After, then svc waits that long before asking again', async () => {
      let first = true;
      fakes.musicbrainz.override(() => {
        if (!first) return undefined;
        first = false;
        return { status: 503, headers: { 'Retry-After': '2', 'Content-Type': 'text/plain' }, body: 'Your requests are exceeding the allowable rate limit.' };
      });
      // The request spacing on a manual clock (test/helpers/limiter-clock.ts): the wait is proven by order.
      const clock = new ManualLimiterClock();
      await start({}, clock);
      const answer = submit({ artist: 'Portishead', title: 'Glory Box' });
      await until(() => clock.dueTimes().includes(2000), 'the limiter holds MusicBrainz until the 2 s named');
      await clock.advance(1999);
      expect(fakes.musicbrainz.calls()).toHaveLength(1);
      await clock.advance(1);
      expect(await answer).toEqual({ artist: 'Portishead', title: 'Glory Box' });
      expect(fakes.musicbrainz.calls()).toHaveLength(2);
    });

    it('When MusicBrainz stays busy (503 with Retry-After: 1), then it is paused about that long, not 3 minutes, and asked again after it (docs/title-first.md "Negative cache")', async () => {
      fakes.musicbrainz.override(() => ({ status: 503, headers: { 'Retry-After': '1', 'Content-Type': 'text/plain' }, body: 'busy' }));
      await start();
      expectNoMusicBrainzFields(await submit({ artist: 'Massive Attack', title: 'Teardrop' }));
      const status = async () => asObject((await request(`${server?.url}/v1/status`)).json).failing_services;
      expect(await status()).toEqual(['musicbrainz']);
      expect(server?.logs.join('\n')).not.toMatch(/skipped for (\d{2,}|[2-9]) s more/);
      const calls = fakes.musicbrainz.calls().length;
      // The pause ends after the asked second (a dead service's would last 180 s).
      expect(await eventually(status, (failing) => failing === undefined, 5000)).toBeUndefined();
      fakes.musicbrainz.reset();
      expect((await submit({ artist: 'Daft Punk', title: 'One More Time', album: 'Musique Vol. 1' })).musicbrainzrecordingid).toBe(ONE_MORE_TIME);
      expect(calls).toBeGreaterThan(0);
    });

    it('When MusicBrainz answers malformed JSON, then the submission succeeds unenriched', async () => {
      fakes.musicbrainz.override(() => ({ status: 200, headers: { 'Content-Type': 'application/json' }, body: '{"recordings": [' }));
      await start();
      expectNoMusicBrainzFields(await submit({ artist: 'Massive Attack', title: 'Teardrop' }));
      expect(server?.logs.join('\n')).toContain('malformed JSON');
    });

    it('When MusicBrainz answers JSON of the wrong shape, then the submission succeeds unenriched', async () => {
      fakes.musicbrainz.override(() => ({ status: 200, headers: { 'Content-Type': 'application/json' }, body: '{"error": "something else"}' }));
      await start();
      expectNoMusicBrainzFields(await submit({ artist: 'Massive Attack', title: 'Teardrop' }));
      expect(server?.logs.join('\n')).toContain('unreadable answer');
    });

    it('When every service is down, then submissions still succeed and the server keeps answering', async () => {
      const gone = await startFake('gone', () => ({ status: 200 }));
      await gone.close();
      server = await startTestServer({
        config: enrichmentConfig(fakes, {
          musicbrainz: { baseUrl: `${gone.url}/ws/2` },
          acoustid: { baseUrl: `${gone.url}/v2` },
          coverartarchive: { baseUrl: gone.url },
        }),
      });
      const metadata = await submit({
        artist: 'Massive Attack',
        title: 'Teardrop',
        musicbrainzartistid: MASSIVE_ATTACK,
        fpcalcfingerprint: 'AQAD',
        fpcalcduration: 10,
      });
      expect(metadata.album).toBeUndefined();
      expect(server.logs.join('\n')).toMatch(/musicbrainz failed: musicbrainz: request failed/);
      expect((await request(`${server.url}/v1/status`)).status).toBe(200);
    });
  });

  describe('recognition', () => {
    it('When a fingerprint is longer than maxFieldLength, then AcoustID receives it whole while the stored field is truncated with a warning', async () => {
      server = await startTestServer({ config: enrichmentConfig(fakes, { musicbrainz: { enabled: false } }) });
      const fingerprint = 'AQAD' + 'tEmUaEkS'.repeat(250);
      const response = await postJson(`${server.url}/v1/remoteinput`, { fpcalcfingerprint: fingerprint, fpcalcduration: 330 });
      expect(response.status).toBe(200);
      const body = asObject(response.json);
      expect(body.warnings).toEqual([`Field 'fpcalcfingerprint' truncated from ${fingerprint.length} to 1000 characters`]);
      expect(asObject(body.processed_metadata).fpcalcfingerprint).toBe(fingerprint.slice(0, 1000));
      const lookups = fakes.acoustid.requests.filter((call) => call.path === '/v2/lookup');
      expect(lookups).toHaveLength(1);
      expect(lookups[0]?.query.fingerprint).toBe(fingerprint);
    });
  });

  describe('offline', () => {
    it('When enrichment is disabled, then no outside request is made at all', async () => {
      await start({ enabled: false });
      const metadata = await submit({ artist: 'Massive Attack', title: 'Teardrop', isrc: 'GBAAA9800321', fpcalcfingerprint: 'AQAD', fpcalcduration: 10 });
      expect(metadata.album).toBeUndefined();
      expect(metadata.enrichment_sources).toBeUndefined();
      expect(fakes.all()).toEqual([]);
    });
  });
});
