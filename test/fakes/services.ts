import type { Config } from '../../src/config/schema';
import { deepMerge } from '../../src/domain/plain-object';
import type { DeepPartial } from '../helpers/test-server';
import { ACOUSTID_KEY, AUDIODB_KEY, FANART_KEY, startAcoustIdFake, startFanartTvFake, startTheAudioDbFake } from './artist-services';
import { startCoverArtArchiveFake } from './cover-art-archive';
import type { FakeServer, RecordedRequest } from './fake-server';
import { startImageHostFake } from './image-host';
import { startMusicBrainzFake, type MusicBrainzFake } from './musicbrainz';
import { startWikidataFake, startWikipediaFake } from './wikimedia';

// Every outside service svc enriches from, as local fakes, and the config that points svc at them.

export interface FakeServices {
  musicbrainz: MusicBrainzFake;
  coverartarchive: FakeServer;
  imageHost: FakeServer;
  wikidata: FakeServer;
  wikipedia: FakeServer;
  theaudiodb: FakeServer;
  fanarttv: FakeServer;
  acoustid: FakeServer;
  /** Every request any fake received, oldest first. */
  all(): (RecordedRequest & { service: string })[];
  /** Every fake answers `ms` later (docs/title-first.md measures with 400 ms). */
  slowDown(ms: number): void;
  /** Every fake holds its answers until the returned release is called. */
  hold(): () => void;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeServices(): Promise<FakeServices> {
  const imageHost = await startImageHostFake();
  const fakes = {
    musicbrainz: await startMusicBrainzFake(),
    coverartarchive: await startCoverArtArchiveFake(imageHost.url),
    imageHost,
    wikidata: await startWikidataFake(),
    wikipedia: await startWikipediaFake(),
    theaudiodb: await startTheAudioDbFake(imageHost.url),
    fanarttv: await startFanartTvFake(imageHost.url),
    acoustid: await startAcoustIdFake(),
  };
  const list: FakeServer[] = Object.values(fakes);
  return {
    ...fakes,
    all: () => list.flatMap((fake) => fake.requests.map((request) => ({ ...request, service: fake.name }))).sort((a, b) => a.at - b.at),
    slowDown: (ms) => list.forEach((fake) => fake.slowDown(ms)),
    hold: () => {
      const releases = list.map((fake) => fake.hold());
      return () => releases.forEach((release) => release());
    },
    reset: () => list.forEach((fake) => fake.reset()),
    close: async () => {
      await Promise.all(list.map((fake) => fake.close()));
    },
  };
}

/** Enrichment on, every service (with keys) pointing at the fakes. */
export function enrichmentConfig(fakes: FakeServices, enrichment: DeepPartial<Config['enrichment']> = {}): DeepPartial<Config> {
  const config: DeepPartial<Config> = {
    // The image store may download enrichment images from the local image host.
    coverFetch: { allowPrivateAddresses: true },
    enrichment: {
      enabled: true,
      contact: 'https://example.org/svc-tests',
      musicbrainz: { enabled: true, baseUrl: fakes.musicbrainz.baseUrl },
      coverartarchive: { enabled: true, baseUrl: fakes.coverartarchive.url },
      wikidata: { enabled: true, baseUrl: fakes.wikidata.url },
      wikipedia: { enabled: true, baseUrl: `${fakes.wikipedia.url}/{lang}`, language: 'en' },
      commons: { baseUrl: fakes.imageHost.url },
      theaudiodb: { enabled: true, baseUrl: `${fakes.theaudiodb.url}/api/v1/json`, apiKey: AUDIODB_KEY },
      fanarttv: { enabled: true, baseUrl: `${fakes.fanarttv.url}/v3`, apiKey: FANART_KEY },
      acoustid: { enabled: true, baseUrl: `${fakes.acoustid.url}/v2`, apiKey: ACOUSTID_KEY },
    },
  };
  return deepMerge(config, { enrichment });
}
