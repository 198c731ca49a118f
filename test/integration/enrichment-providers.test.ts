import { UpstreamError } from '../../src/enrich/http';
import { VERSION } from '../../src/version';
import { ACOUSTID_KEY, FANART_KEY, FINGERPRINTS } from '../fakes/artist-services';
import { startFakeServices, type FakeServices } from '../fakes/services';
import {
  DAFT_PUNK,
  MASSIVE_ATTACK,
  MASSIVE_ATTACK_WIKIDATA,
  MEZZANINE,
  MEZZANINE_GROUP,
  MUSIQUE,
  MUSIQUE_GROUP,
  MUSIQUE_OTHER_EDITION,
  TEARDROP,
  TEARDROP_ACOUSTID,
  TEARDROP_SINGLE,
} from '../fixtures/ids';
import { noDeadline, planAgainstFakes, type TestPlan } from '../helpers/enrichment-plan';

// Each provider other than MusicBrainz, called directly, against the fakes over real HTTP.

const WIKIDATA_LINK = `https://www.wikidata.org/wiki/${MASSIVE_ATTACK_WIKIDATA}`;
const TEARDROP_FINGERPRINT = Object.keys(FINGERPRINTS)[0] ?? '';

describe('enrichment providers', () => {
  let fakes: FakeServices;
  let current: TestPlan | undefined;
  const plan = (enrichment: Parameters<typeof planAgainstFakes>[1] = {}) => (current = planAgainstFakes(fakes, enrichment));

  beforeAll(async () => {
    fakes = await startFakeServices();
  });
  afterAll(() => fakes.close());
  beforeEach(() => fakes.reset());
  afterEach(() => current?.close());

  describe('Cover Art Archive', () => {
    it('When the release has a front cover, then the image host location CAA redirects to is the cover candidate', async () => {
      const caa = plan().enricher('coverartarchive');
      const result = await caa.enrich({ musicbrainzalbumid: MEZZANINE, musicbrainzreleasegroupid: MEZZANINE_GROUP }, noDeadline());
      expect(result?.images).toEqual([
        { category: 'cover', url: `${fakes.imageHost.url}/download/mbid-${MEZZANINE}/mbid-${MEZZANINE}-829521842_thumb1200.jpg`, source: 'coverartarchive' },
      ]);
      expect(fakes.coverartarchive.requests.map((request) => request.path)).toEqual([`/release/${MEZZANINE}/front-1200`]);
      expect(fakes.coverartarchive.requests[0]?.headers['user-agent']).toBe(`svc/${VERSION} ( https://example.org/svc-tests )`);
      // The provider never downloads the image itself.
      expect(fakes.imageHost.requests).toHaveLength(0);
    });

    it('When the release has no cover (404), then the release group front cover is used', async () => {
      const caa = plan().enricher('coverartarchive');
      const result = await caa.enrich({ musicbrainzalbumid: MUSIQUE, musicbrainzreleasegroupid: MUSIQUE_GROUP }, noDeadline());
      expect(result?.images?.[0]?.url).toBe(
        `${fakes.imageHost.url}/download/mbid-${MUSIQUE_OTHER_EDITION}/mbid-${MUSIQUE_OTHER_EDITION}-2207010_thumb1200.jpg`,
      );
      expect(fakes.coverartarchive.requests.map((request) => request.path)).toEqual([
        `/release/${MUSIQUE}/front-1200`,
        `/release-group/${MUSIQUE_GROUP}/front-1200`,
      ]);
    });

    it('When neither has a front cover, then there is none, and the 404s are cached', async () => {
      const caa = plan().enricher('coverartarchive');
      const track = { musicbrainzalbumid: TEARDROP_SINGLE, musicbrainzreleasegroupid: '5c0f4c9e-5a8b-4e3a-9b3f-1d7a2c6e8fa2' };
      expect(await caa.enrich(track, noDeadline())).toBeNull();
      expect(await caa.enrich(track, noDeadline())).toBeNull();
      expect(fakes.coverartarchive.requests).toHaveLength(2);
    });

    it('When the track has no release ids, then no request is made', async () => {
      expect(await plan().enricher('coverartarchive').enrich({ artist: 'Massive Attack' }, noDeadline())).toBeNull();
      expect(fakes.coverartarchive.requests).toHaveLength(0);
    });
  });

  describe('Wikidata and Wikipedia', () => {
    it('When the artist links a Wikidata item, then description, Wikipedia summary and Commons image are found', async () => {
      const wikidata = plan().enricher('wikidata');
      const result = await wikidata.enrich({ artist: 'Massive Attack', artistwebsites: ['https://www.massiveattack.co.uk/', WIKIDATA_LINK] }, noDeadline());
      expect(result?.fields).toEqual({
        artistshortbio: 'English trip hop group',
        artistlongbio: expect.stringContaining('Massive Attack are an English trip hop group formed in 1988 in Bristol') as unknown,
      });
      expect(result?.sources).toEqual({ artistlongbio: 'wikipedia' });
      expect(result?.images).toEqual([
        { category: 'thumbnail', url: `${fakes.imageHost.url}/wiki/Special:FilePath/Massive_Attack_Roskilde_2008.jpg?width=1000`, source: 'wikidata' },
      ]);
      expect(fakes.wikidata.requests[0]?.query).toMatchObject({
        action: 'wbgetentities',
        ids: MASSIVE_ATTACK_WIKIDATA,
        props: 'descriptions|claims|sitelinks',
        languages: 'en',
        sitefilter: 'enwiki',
        format: 'json',
      });
      expect(fakes.wikipedia.requests.map((request) => request.path)).toEqual(['/en/api/rest_v1/page/summary/Massive_Attack']);
    });

    it('When the configured language has no article summary, then the description is in that language and the biography falls back to English', async () => {
      const wikidata = plan({ wikipedia: { language: 'de' } }).enricher('wikidata');
      const result = await wikidata.enrich({ artistwebsites: [WIKIDATA_LINK] }, noDeadline());
      expect(result?.fields?.artistshortbio).toBe('britische Trip-Hop-Band');
      expect(result?.fields?.artistlongbio).toEqual(expect.stringContaining('English trip hop group'));
      expect(fakes.wikipedia.requests.map((request) => request.path)).toEqual([
        '/de/api/rest_v1/page/summary/Massive_Attack',
        '/en/api/rest_v1/page/summary/Massive_Attack',
      ]);
    });

    it('When the language has an article, then the biography is in that language', async () => {
      const result = await plan({ wikipedia: { language: 'fr' } })
        .enricher('wikidata')
        .enrich({ artistwebsites: [WIKIDATA_LINK] }, noDeadline());
      expect(result?.fields?.artistlongbio).toMatch(/^Massive Attack est un groupe britannique/);
    });

    it('When Wikipedia fails, then the Wikidata description and image are kept', async () => {
      fakes.wikipedia.override(() => ({ status: 503, body: 'down' }));
      const testPlan = plan();
      const result = await testPlan.enricher('wikidata').enrich({ artistwebsites: [WIKIDATA_LINK] }, noDeadline());
      expect(result?.fields).toEqual({ artistshortbio: 'English trip hop group' });
      expect(result?.images).toHaveLength(1);
      expect(testPlan.logs.join('\n')).toContain('wikipedia summary failed');
    });

    it('When the artist has no Wikidata link, then no request is made', async () => {
      expect(
        await plan()
          .enricher('wikidata')
          .enrich({ artistwebsites: ['https://www.daftpunk.com/'] }, noDeadline()),
      ).toBeNull();
      expect(fakes.wikidata.requests).toHaveLength(0);
    });
  });

  describe('TheAudioDB', () => {
    it('When the MusicBrainz artist id is known, then biography and artist images are found by it', async () => {
      const result = await plan().enricher('theaudiodb').enrich({ artist: 'Massive Attack', musicbrainzartistid: MASSIVE_ATTACK }, noDeadline());
      expect(result?.fields).toEqual({ artistlongbio: 'Massive Attack are a trip hop group from Bristol, England, formed in 1988.' });
      const images = `${fakes.imageHost.url}/images/theaudiodb/media/artist`;
      expect(result?.images).toEqual([
        { category: 'thumbnail', url: `${images}/thumb/massive-attack-thumb.jpg`, source: 'theaudiodb' },
        { category: 'logo', url: `${images}/logo/massive-attack-logo.png`, source: 'theaudiodb' },
        { category: 'banner', url: `${images}/banner/massive-attack-banner.jpg`, source: 'theaudiodb' },
        { category: 'fanart', url: `${images}/fanart/massive-attack-1.jpg`, source: 'theaudiodb' },
        { category: 'fanart', url: `${images}/fanart/massive-attack-2.jpg`, source: 'theaudiodb' },
      ]);
      expect(fakes.theaudiodb.requests.map((request) => `${request.path}?i=${request.query.i}`)).toEqual([
        `/api/v1/json/123/artist-mb.php?i=${MASSIVE_ATTACK}`,
      ]);
    });

    it('When the language is German, then the German biography is used', async () => {
      const result = await plan({ wikipedia: { language: 'de' } })
        .enricher('theaudiodb')
        .enrich({ musicbrainzartistid: MASSIVE_ATTACK }, noDeadline());
      expect(result?.fields?.artistlongbio).toBe('Massive Attack ist eine britische Band aus Bristol.');
    });

    it('When the id is unknown to TheAudioDB, then the artist is searched by name ("feat." parts dropped)', async () => {
      const result = await plan().enricher('theaudiodb').enrich({ artist: 'Daft Punk feat. Romanthony', musicbrainzartistid: DAFT_PUNK }, noDeadline());
      expect(result?.fields?.artistlongbio).toMatch(/^Daft Punk were a French electronic music duo/);
      expect(fakes.theaudiodb.requests.map((request) => request.path)).toEqual(['/api/v1/json/123/artist-mb.php', '/api/v1/json/123/search.php']);
      expect(fakes.theaudiodb.requests[1]?.query.s).toBe('daft punk');
    });

    it('When the name search finds only a different artist, then nothing is used', async () => {
      expect(await plan().enricher('theaudiodb').enrich({ artist: 'Daft Punk Tribute Orchestra' }, noDeadline())).toBeNull();
    });
  });

  describe('fanart.tv', () => {
    it('When the artist has images, then the most liked fanart, thumbnail, HD logo, banner and the album cover are found in one request', async () => {
      const result = await plan()
        .enricher('fanarttv')
        .enrich({ musicbrainzartistid: MASSIVE_ATTACK, musicbrainzreleasegroupid: MEZZANINE_GROUP }, noDeadline());
      const base = `${fakes.imageHost.url}/images/fanarttv/fanart/music`;
      expect(result?.images).toEqual([
        { category: 'cover', url: `${base}/${MEZZANINE_GROUP}/albumcover/albumcover-0.jpg`, source: 'fanarttv' },
        { category: 'fanart', url: `${base}/${MASSIVE_ATTACK}/artistbackground/artistbackground-1.jpg`, source: 'fanarttv' },
        { category: 'fanart', url: `${base}/${MASSIVE_ATTACK}/artistbackground/artistbackground-2.jpg`, source: 'fanarttv' },
        { category: 'fanart', url: `${base}/${MASSIVE_ATTACK}/artistbackground/artistbackground-0.jpg`, source: 'fanarttv' },
        { category: 'thumbnail', url: `${base}/${MASSIVE_ATTACK}/artistthumb/artistthumb-1.jpg`, source: 'fanarttv' },
        { category: 'logo', url: `${base}/${MASSIVE_ATTACK}/hdmusiclogo/hdmusiclogo-0.jpg`, source: 'fanarttv' },
        { category: 'banner', url: `${base}/${MASSIVE_ATTACK}/musicbanner/musicbanner-0.jpg`, source: 'fanarttv' },
      ]);
      expect(fakes.fanarttv.requests.map((request) => request.path)).toEqual([`/v3/music/${MASSIVE_ATTACK}`]);
      expect(fakes.fanarttv.requests[0]?.query.api_key).toBe(FANART_KEY);
    });

    it('When the artist is unknown (404), then the album cover comes from the release group endpoint', async () => {
      const result = await plan().enricher('fanarttv').enrich({ musicbrainzartistid: DAFT_PUNK, musicbrainzreleasegroupid: MUSIQUE_GROUP }, noDeadline());
      expect(result?.images).toEqual([
        { category: 'cover', url: `${fakes.imageHost.url}/images/fanarttv/fanart/music/${MUSIQUE_GROUP}/albumcover/albumcover-1.jpg`, source: 'fanarttv' },
      ]);
      expect(fakes.fanarttv.requests.map((request) => request.path)).toEqual([`/v3/music/${DAFT_PUNK}`, `/v3/music/albums/${MUSIQUE_GROUP}`]);
    });

    it('When fanart.tv is enabled without a key, then it is left out of the plan with a warning', () => {
      const testPlan = plan({ fanarttv: { apiKey: '' } });
      expect(testPlan.plan.flat().map((enricher) => enricher.name)).not.toContain('fanarttv');
      expect(testPlan.logs.join('\n')).toContain('fanarttv is enabled but has no apiKey');
    });
  });

  describe('AcoustID', () => {
    it('When a fingerprint and duration are submitted, then the best result above the threshold names the recording', async () => {
      const result = await plan().enricher('acoustid').enrich({ fpcalcfingerprint: TEARDROP_FINGERPRINT, fpcalcduration: 330.4 }, noDeadline());
      expect(result?.fields).toEqual({
        musicbrainzrecordingid: TEARDROP,
        acoustid: TEARDROP_ACOUSTID,
        title: 'Teardrop',
        artist: 'Massive Attack',
        musicbrainzartistid: MASSIVE_ATTACK,
      });
      expect(fakes.acoustid.requests).toHaveLength(1);
      expect(fakes.acoustid.requests[0]).toMatchObject({
        method: 'POST',
        path: '/v2/lookup',
        query: { client: ACOUSTID_KEY, meta: 'recordings', duration: '330', fingerprint: TEARDROP_FINGERPRINT, format: 'json' },
      });
    });

    it('When the fingerprint is unknown, then nothing is found (and that answer is cached)', async () => {
      const acoustid = plan().enricher('acoustid');
      expect(await acoustid.enrich({ fpcalcfingerprint: 'AQADunknown', fpcalcduration: 200 }, noDeadline())).toBeNull();
      expect(await acoustid.enrich({ fpcalcfingerprint: 'AQADunknown', fpcalcduration: 200 }, noDeadline())).toBeNull();
      expect(fakes.acoustid.requests).toHaveLength(1);
    });

    it('When the key is refused, then an UpstreamError is thrown and nothing is cached', async () => {
      const acoustid = plan({ acoustid: { apiKey: 'wrong-key' } }).enricher('acoustid');
      const track = { fpcalcfingerprint: TEARDROP_FINGERPRINT, fpcalcduration: 330 };
      await expect(acoustid.enrich(track, noDeadline())).rejects.toThrow(UpstreamError);
      await expect(acoustid.enrich(track, noDeadline())).rejects.toThrow('acoustid: HTTP 400');
      expect(fakes.acoustid.requests).toHaveLength(2);
    });

    it('When the recording id is already known, then no recognition is attempted', async () => {
      expect(
        await plan()
          .enricher('acoustid')
          .enrich({ fpcalcfingerprint: TEARDROP_FINGERPRINT, fpcalcduration: 330, musicbrainzrecordingid: TEARDROP }, noDeadline()),
      ).toBeNull();
      expect(fakes.acoustid.requests).toHaveLength(0);
    });
  });
});
