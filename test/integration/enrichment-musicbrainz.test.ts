import type { TrackFields } from '../../src/domain/track';
import { runEnrichers } from '../../src/enrich/run-enrichers';
import { silentLogger } from '../helpers/silent-logger';
import { VERSION } from '../../src/version';
import { FINGERPRINTS } from '../fakes/artist-services';
import { startFakeServices, type FakeServices } from '../fakes/services';
import { DAFT_PUNK, MASSIVE_ATTACK, MEZZANINE, MEZZANINE_GROUP, MUSIQUE, MUSIQUE_GROUP, ONE_MORE_TIME, TEARDROP, TEARDROP_ISRC } from '../fixtures/ids';
import { noDeadline, planAgainstFakes, type TestPlan } from '../helpers/enrichment-plan';

// The MusicBrainz provider (search, MBID and ISRC lookups, release choice) and the whole staged
// plan, against the fakes. MusicBrainz requests are spaced 1 s apart, so each test makes few.

const TEARDROP_FIELDS = {
  musicbrainzrecordingid: TEARDROP,
  title: 'Teardrop',
  artist: 'Massive Attack',
  musicbrainzartistid: MASSIVE_ATTACK,
  isrc: TEARDROP_ISRC,
  musicbrainzalbumid: MEZZANINE,
  musicbrainzreleasegroupid: MEZZANINE_GROUP,
  album: 'Mezzanine',
  date: '1998-04-20',
  label: 'Circa',
  catalognumber: 'WBRCD4',
  barcode: '724384559923',
  releasegroup: 'Mezzanine',
  genre: 'trip hop',
  genres: ['trip hop', 'downtempo'],
  artistwebsites: ['https://www.massiveattack.co.uk/', 'https://www.wikidata.org/wiki/Q10527', 'https://www.discogs.com/artist/1615-Massive-Attack'],
};

/** The work of the Teardrop fixture (test/fixtures/musicbrainz/recording-teardrop.json), as the play log keeps it. */
const TEARDROP_WORK = {
  iswc: 'T-010.433.530-1',
  composer: 'Robert Del Naja, Andrew Vowles',
  writers: ['Robert Del Naja', 'Andrew Vowles', 'Elizabeth Fraser'],
};

describe('MusicBrainz provider', () => {
  let fakes: FakeServices;
  let current: TestPlan | undefined;
  const musicbrainz = () => (current = planAgainstFakes(fakes)).enricher('musicbrainz');

  beforeAll(async () => {
    fakes = await startFakeServices();
  });
  afterAll(() => fakes.close());
  beforeEach(() => fakes.reset());
  afterEach(() => current?.close());

  it('When artist and title are searched, then the recording on the official album wins over compilations, with label, genres and web sites', async () => {
    const result = await musicbrainz().enrich({ artist: 'Massive Attack', title: 'Teardrop' }, noDeadline());
    // Search answers carry no genres, so they come from the release lookup.
    expect(result?.fields).toEqual(TEARDROP_FIELDS);
    const calls = fakes.musicbrainz.calls();
    expect(calls.map((call) => call.path)).toEqual(['/ws/2/recording', `/ws/2/release/${MEZZANINE}`, `/ws/2/artist/${MASSIVE_ATTACK}`]);
    expect(calls[0]?.query).toEqual({ query: 'recording:"Teardrop" AND artist:"Massive Attack"', limit: '25', fmt: 'json' });
    expect(calls[1]?.query.inc).toBe('labels genres release-groups');
    expect(calls[2]?.query.inc).toBe('url-rels genres');
    for (const call of calls) expect(call.headers['user-agent']).toBe(`svc/${VERSION} ( https://example.org/svc-tests )`);
  });

  it('When an album is given, then the release of that album is chosen, even a compilation', async () => {
    const result = await musicbrainz().enrich({ artist: 'Daft Punk', title: 'One More Time', album: 'Musique Vol. 1' }, noDeadline());
    expect(result?.fields).toMatchObject({
      musicbrainzrecordingid: ONE_MORE_TIME,
      musicbrainzalbumid: MUSIQUE,
      musicbrainzreleasegroupid: MUSIQUE_GROUP,
      album: 'Musique Vol. 1',
      label: 'Virgin',
      genres: ['french house', 'house'],
      musicbrainzartistid: DAFT_PUNK,
      artistwebsites: ['https://www.daftpunk.com/'],
    });
    expect(fakes.musicbrainz.calls('/ws/2/recording')[0]?.query.query).toBe('recording:"One More Time" AND artist:"Daft Punk" AND release:"Musique Vol. 1"');
  });

  it('When the search finds only weak candidates, then nothing is filled and no further lookup is made', async () => {
    expect(await musicbrainz().enrich({ artist: 'Portishead', title: 'Glory Box' }, noDeadline())).toBeNull();
    expect(fakes.musicbrainz.calls()).toHaveLength(1);
  });

  it('When the recording MBID is submitted, then it is looked up directly and its best release chosen', async () => {
    const result = await musicbrainz().enrich({ musicbrainzrecordingid: TEARDROP }, noDeadline());
    expect(result?.fields).toMatchObject({ title: 'Teardrop', artist: 'Massive Attack', album: 'Mezzanine', musicbrainzalbumid: MEZZANINE });
    expect(fakes.musicbrainz.calls()[0]?.path).toBe(`/ws/2/recording/${TEARDROP}`);
    expect(fakes.musicbrainz.calls()[0]?.query.inc).toBe('artist-credits releases release-groups isrcs genres work-rels work-level-rels artist-rels');
  });

  it('When only an ISRC is submitted, then MusicBrainz accepts every request and the recording, its album release and release group are found', async () => {
    const result = await musicbrainz().enrich({ isrc: 'gb-aaa-98-00321' }, noDeadline());
    expect(result?.fields).toMatchObject({
      musicbrainzrecordingid: TEARDROP,
      title: 'Teardrop',
      artist: 'Massive Attack',
      album: 'Mezzanine',
      musicbrainzalbumid: MEZZANINE,
      musicbrainzreleasegroupid: MEZZANINE_GROUP,
      date: '1998-04-20',
      label: 'Circa',
    });
    const calls = fakes.musicbrainz.calls();
    expect(calls.map((call) => call.path)).toEqual([
      `/ws/2/isrc/${TEARDROP_ISRC}`,
      `/ws/2/recording/${TEARDROP}`,
      `/ws/2/release/${MEZZANINE}`,
      `/ws/2/artist/${MASSIVE_ATTACK}`,
    ]);
    // ISRC.pm: no release-groups on /isrc (the old request was refused with 400).
    expect(calls[0]?.query.inc).toBe('artist-credits');
    expect(fakes.musicbrainz.refusals()).toEqual([]);
  });

  it("When the ISRC comes as a list, as What's Now Playing sends it, then the first well-formed one is looked up", async () => {
    const result = await musicbrainz().enrich({ isrc: ['not an isrc', 'GB-AAA-98-00321', 'USRC17607839'] }, noDeadline());
    expect(result?.fields).toMatchObject({ musicbrainzrecordingid: TEARDROP, album: 'Mezzanine' });
    expect(fakes.musicbrainz.calls()[0]?.path).toBe(`/ws/2/isrc/${TEARDROP_ISRC}`);
    expect(fakes.musicbrainz.refusals()).toEqual([]);
  });

  it("When the artist MBID comes as a list, then the first MBID in it names the artist, not the recording's credit", async () => {
    const submittedArtist = '00000000-0000-4000-8000-000000000001';
    const result = await musicbrainz().enrich(
      { musicbrainzrecordingid: TEARDROP, musicbrainzartistid: ['not an id', submittedArtist, MASSIVE_ATTACK] },
      noDeadline(),
    );
    expect(result?.fields).toMatchObject({ album: 'Mezzanine' });
    const artistLookups = fakes.musicbrainz.calls().filter((call) => call.path.startsWith('/ws/2/artist/'));
    expect(artistLookups.map((call) => call.path)).toEqual([`/ws/2/artist/${submittedArtist}`]);
  });

  it('When the recording lookup after the ISRC fails, then the ISRC match stands without an album', async () => {
    fakes.musicbrainz.override((request) => (request.path.startsWith('/ws/2/recording/') ? { status: 500, body: 'Internal Server Error' } : undefined));
    const result = await musicbrainz().enrich({ isrc: TEARDROP_ISRC }, noDeadline());
    expect(result?.fields).toMatchObject({ musicbrainzrecordingid: TEARDROP, title: 'Teardrop', artist: 'Massive Attack' });
    expect(result?.fields?.album).toBeUndefined();
    expect(current?.logs.join('\n')).toMatch(/musicbrainz recording lookup failed.*HTTP 500/);
  });

  it('When the release lookup fails, then the match is still returned without label', async () => {
    fakes.musicbrainz.override((request) => (request.path.startsWith('/ws/2/release/') ? { status: 500, body: 'Internal Server Error' } : undefined));
    const result = await musicbrainz().enrich({ artist: 'Massive Attack', title: 'Teardrop' }, noDeadline());
    expect(result?.fields).toMatchObject({ musicbrainzrecordingid: TEARDROP, album: 'Mezzanine' });
    expect(result?.fields?.label).toBeUndefined();
    expect(current?.logs.join('\n')).toMatch(/musicbrainz release lookup failed.*HTTP 500/);
  });
});

describe('the whole plan', () => {
  let fakes: FakeServices;

  beforeAll(async () => {
    fakes = await startFakeServices();
  });
  afterAll(() => fakes.close());

  it('When only a fingerprint is submitted, then recognition, MusicBrainz, the cover and the artist providers run in order', async () => {
    const testPlan = planAgainstFakes(fakes);
    try {
      expect(testPlan.plan.map((stage) => stage.map((enricher) => enricher.name))).toEqual([
        ['acoustid'],
        ['musicbrainz'],
        ['coverartarchive'],
        ['wikidata', 'theaudiodb', 'fanarttv', 'musicbrainz'],
      ]);
      const fingerprint = Object.keys(FINGERPRINTS)[0] ?? '';
      const submitted = { fpcalcfingerprint: fingerprint, fpcalcduration: 330, genre: 'Downtempo' };
      const outcome = await runEnrichers(submitted, testPlan.plan, { deadlineMs: 10_000, logger: silentLogger });
      const fields: TrackFields = { ...submitted, ...outcome.added };

      expect(outcome.timedOut).toBe(false);
      // A recording lookup carries the recording's own genres, which come before the release's.
      expect(fields).toMatchObject({ ...TEARDROP_FIELDS, genres: ['trip hop', 'electronic'], genre: 'Downtempo', artistshortbio: 'English trip hop group' });
      expect(fields.artistlongbio).toEqual(expect.stringContaining('English trip hop group formed in 1988'));
      expect(outcome.sources).toMatchObject({
        musicbrainzrecordingid: 'acoustid',
        title: 'acoustid',
        artist: 'acoustid',
        album: 'musicbrainz',
        label: 'musicbrainz',
        artistwebsites: 'musicbrainz',
        artistshortbio: 'wikidata',
        artistlongbio: 'wikipedia',
      });
      // The submitter's genre is never overwritten.
      expect(outcome.sources.genre).toBeUndefined();
      expect(outcome.images.map((image) => `${image.category}:${image.source}`)).toEqual([
        'cover:coverartarchive',
        'thumbnail:wikidata',
        'thumbnail:theaudiodb',
        'logo:theaudiodb',
        'banner:theaudiodb',
        'fanart:theaudiodb',
        'fanart:theaudiodb',
        'cover:fanarttv',
        'fanart:fanarttv',
        'fanart:fanarttv',
        'fanart:fanarttv',
        'thumbnail:fanarttv',
        'logo:fanarttv',
        'banner:fanarttv',
      ]);
      // The recording looked up by its id came with its work: the works enricher asked the cache.
      expect(fields).toMatchObject(TEARDROP_WORK);
      expect(outcome.sources).toMatchObject({ iswc: 'musicbrainz', writers: 'musicbrainz' });
      // MusicBrainz was asked by recording id (from AcoustID), then for the release and the artist.
      expect(fakes.musicbrainz.calls().map((call) => call.path)).toEqual([
        `/ws/2/recording/${TEARDROP}`,
        `/ws/2/release/${MEZZANINE}`,
        `/ws/2/artist/${MASSIVE_ATTACK}`,
      ]);
    } finally {
      await testPlan.close();
    }
  });
});

describe('rights data of a searched recording', () => {
  let fakes: FakeServices;

  beforeAll(async () => {
    fakes = await startFakeServices();
  });
  afterAll(() => fakes.close());

  it('When only artist and title are submitted, then the work (ISWC, writers) comes from one recording lookup after the release and artist', async () => {
    const testPlan = planAgainstFakes(fakes);
    try {
      const outcome = await runEnrichers({ artist: 'Massive Attack', title: 'Teardrop' }, testPlan.plan, { deadlineMs: 15_000, logger: silentLogger });
      expect(outcome.timedOut).toBe(false);
      expect(outcome.added).toMatchObject({ ...TEARDROP_WORK, musicbrainzrecordingid: TEARDROP, label: 'Circa', catalognumber: 'WBRCD4' });
      const calls = fakes.musicbrainz.calls();
      // The match and its details first; the works last, so the artist providers never waited on it.
      expect(calls.map((call) => call.path)).toEqual([
        '/ws/2/recording',
        `/ws/2/release/${MEZZANINE}`,
        `/ws/2/artist/${MASSIVE_ATTACK}`,
        `/ws/2/recording/${TEARDROP}`,
      ]);
      expect(calls[3]?.query.inc).toBe('artist-credits releases release-groups isrcs genres work-rels work-level-rels artist-rels');
    } finally {
      await testPlan.close();
    }
  });

  it('When the submission names its writers, then no work is looked up and they stay as sent', async () => {
    fakes.reset();
    const testPlan = planAgainstFakes(fakes);
    try {
      const submitted = { artist: 'Massive Attack', title: 'Teardrop', writers: ['ROBERT DEL NAJA'] };
      const outcome = await runEnrichers(submitted, testPlan.plan, { deadlineMs: 15_000, logger: silentLogger });
      expect(outcome.added.writers).toBeUndefined();
      expect(outcome.added.iswc).toBeUndefined();
      expect(fakes.musicbrainz.calls('/ws/2/recording/')).toHaveLength(0);
    } finally {
      await testPlan.close();
    }
  });
});
