import { createHash } from 'node:crypto';
import type { Config } from '../../src/config/schema';
import { TINY_PNG } from '../helpers/images';
import { enrichmentConfig, startFakeServices, type FakeServices } from '../fakes/services';
import { MEZZANINE, MUSIQUE, MUSIQUE_GROUP, TEARDROP, TEARDROP_ISRC } from '../fixtures/ids';
import { asObject, postJson, request } from '../helpers/http';
import { startTestServer, type DeepPartial, type TestServer } from '../helpers/test-server';
import { connectClient, type Frame } from '../helpers/ws-client';

// The cover in the answer (docs/streams.md "The image store"): a front cover that enrichment
// found (release, else release group, else a provider's album cover) is downloaded within the
// enrichment deadline, so the 200's processed_metadata.coverurl, /v1/last and the first track
// frame carry it. A cover that cannot be had in time costs the cover (it arrives later through
// the stream), never the submission.

const PNG_KEY = createHash('sha256').update(TINY_PNG).digest('hex');
const COVER_URL = `cover/${PNG_KEY}`;

describe('the enrichment cover in the first answer', () => {
  let fakes: FakeServices;
  let t: TestServer | undefined;

  const start = async (enrichment: DeepPartial<Config['enrichment']> = {}) => {
    t = await startTestServer({ config: enrichmentConfig(fakes, enrichment) });
    return t;
  };
  const submit = async (server: TestServer, body: Record<string, unknown>) => {
    const response = await postJson(`${server.url}/v1/remoteinput`, body);
    expect(response.status).toBe(200);
    const json = asObject(response.json);
    return { dbid: json.dbid, metadata: asObject(json.processed_metadata) };
  };
  const coverDownloads = () => fakes.imageHost.requests.map((call) => call.path);

  beforeAll(async () => {
    fakes = await startFakeServices();
  });
  afterAll(() => fakes.close());
  beforeEach(() => fakes.reset());
  afterEach(async () => {
    // Background image downloads finish first, so none reaches a fake after the next reset.
    await t?.server.images.idle();
    await t?.close();
    t = undefined;
  });

  it('When a first-time track is found with a release cover, then the 200, /v1/last and the track frames of that dbid carry coverurl (the bare title first), and GET serves it', async () => {
    const server = await start();
    const viewer = await connectClient(server.url);
    try {
      const { dbid, metadata } = await submit(server, { artist: 'Massive Attack', title: 'Teardrop' });
      expect(metadata.musicbrainzalbumid).toBe(MEZZANINE);
      expect(metadata.coverurl).toBe(COVER_URL);
      // The release's own front cover (archive.org path of the release), fetched before the answer.
      expect(coverDownloads()[0]).toMatch(new RegExp(`^/download/mbid-${MEZZANINE}/`));

      // Title first (docs/title-first.md): the bare record is announced at once, the cover comes with an update of the same dbid.
      const coverFrame = await viewer.waitFor(
        (frame: Frame) => frame.type === 'track' && asObject(frame.track).dbid === dbid && asObject(frame.track).coverurl !== undefined,
      );
      expect(asObject(coverFrame.track).coverurl).toBe(COVER_URL);
      expect(asObject((await request(`${server.url}/v1/last`)).json).coverurl).toBe(COVER_URL);

      const image = await fetch(`${server.url}/${COVER_URL}`);
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await image.arrayBuffer()).equals(TINY_PNG)).toBe(true);
    } finally {
      viewer.close();
    }
  });

  it('When only an ISRC is submitted (as DJ software often does), then the 200 has the recording, its album release and the cover', async () => {
    const server = await start();
    const { metadata } = await submit(server, { isrc: TEARDROP_ISRC });
    expect(metadata).toMatchObject({
      isrc: TEARDROP_ISRC,
      musicbrainzrecordingid: TEARDROP,
      title: 'Teardrop',
      artist: 'Massive Attack',
      album: 'Mezzanine',
      musicbrainzalbumid: MEZZANINE,
      coverurl: COVER_URL,
    });
    expect(fakes.musicbrainz.refusals()).toEqual([]);
  });

  it('When the release has no front cover, then the release group cover is in the 200', async () => {
    const server = await start();
    const { metadata } = await submit(server, { artist: 'Daft Punk', title: 'One More Time', album: 'Musique Vol. 1' });
    expect(metadata).toMatchObject({ musicbrainzalbumid: MUSIQUE, musicbrainzreleasegroupid: MUSIQUE_GROUP, coverurl: COVER_URL });
    const archive = fakes.coverartarchive.requests.map((call) => call.path);
    expect(archive).toEqual([`/release/${MUSIQUE}/front-1200`, `/release-group/${MUSIQUE_GROUP}/front-1200`]);
  });

  it('When the Cover Art Archive is off, then a provider album cover (fanart.tv, most liked) is in the 200', async () => {
    const server = await start({ coverartarchive: { enabled: false } });
    const { metadata } = await submit(server, { artist: 'Daft Punk', title: 'One More Time', album: 'Musique Vol. 1' });
    expect(metadata.coverurl).toBe(COVER_URL);
    expect(coverDownloads()[0]).toBe(`/images/fanarttv/fanart/music/${MUSIQUE_GROUP}/albumcover/albumcover-1.jpg`);
  });

  it('When the cover cannot be downloaded before the enrichment deadline, then the 200 comes at the deadline without it, and it arrives later by the stream', async () => {
    // Three MusicBrainz lookups a second apart, maybe behind the works lookup an earlier test left
    // in the process's rate limit, then the archive's answer: all before the deadline.
    const server = await start({ deadlineSeconds: 6 });
    let first = true;
    fakes.imageHost.override((call) => {
      if (!call.path.startsWith('/download/') || !first) return undefined;
      first = false;
      return { status: 200, headers: { 'Content-Type': 'image/png' }, body: TINY_PNG, delayMs: 60_000 };
    });
    const viewer = await connectClient(server.url);
    try {
      const started = performance.now();
      const { dbid, metadata } = await submit(server, { artist: 'Massive Attack', title: 'Teardrop' });
      expect(performance.now() - started).toBeLessThan(8000);
      expect(metadata.album).toBe('Mezzanine');
      expect(metadata.coverurl).toBeUndefined();
      const coverFrame = await viewer.waitFor((frame: Frame) => frame.type === 'image' && frame.dbid === dbid && frame.category === 'cover', {
        timeoutMs: 10_000,
      });
      expect(coverFrame.key).toBe(PNG_KEY);
      expect(asObject((await request(`${server.url}/v1/last`)).json).coverurl).toBe(COVER_URL);
    } finally {
      viewer.close();
    }
  });

  it('When 20 identical submissions of a new track arrive at once, then every service and the image host see one request per distinct URL, redirect hops included', async () => {
    const server = await start();
    const results = await Promise.all(Array.from({ length: 20 }, () => submit(server, { artist: 'Massive Attack', title: 'Teardrop' })));
    for (const { metadata } of results) expect(metadata.coverurl).toBe(COVER_URL);
    await server.server.images.idle();

    const calls = fakes.all().map((call) => `${call.service} ${call.method} ${call.path} ${JSON.stringify(call.query)}`);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.filter((call, index) => calls.indexOf(call) !== index)).toEqual([]);
    expect(fakes.musicbrainz.refusals()).toEqual([]);
    // Every kind of outside request took part: lookups, the archive's redirect, the image hops.
    const services = new Set(fakes.all().map((call) => call.service));
    for (const service of ['musicbrainz', 'coverartarchive', 'wikidata', 'wikipedia', 'theaudiodb', 'image-host']) expect(services).toContain(service);
    expect(fakes.imageHost.requests.some((call) => call.path.startsWith('/wiki/Special:FilePath/'))).toBe(true);
    expect(fakes.imageHost.requests.some((call) => call.path.startsWith('/upload/'))).toBe(true);
  });
});
