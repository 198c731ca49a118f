import type { FrozenConfig } from '../config/schema';
import type { Logger } from '../log';
import type { Db } from '../store/database';
import { createLookupCacheStore } from '../store/lookup-cache';
import { VERSION } from '../version';
import { createAcoustId } from './acoustid';
import { createCoverArtArchive } from './cover-art-archive';
import type { Enricher, EnrichmentPlan } from './enricher';
import { createFanartTv } from './fanarttv';
import { ServiceClient, type ServiceClientOptions } from './http';
import { Lookups } from './lookups';
import { createMusicBrainz } from './musicbrainz';
import { processRateLimiter } from './rate-limit';
import type { ServiceDeps } from './service';
import { createTheAudioDb } from './theaudiodb';
import { createWikidata } from './wikidata';
import { WikipediaClient } from './wikipedia';

// The enrichers this configuration enables, in stage order (issue 5 "Pipeline"): recognition
// (AcoustID), then MusicBrainz (by MBID, ISRC or search), then the cover, then the artist
// providers in parallel. With `enrichment.enabled: false` the plan is empty and no outbound
// request is ever made.

export interface PlanDeps {
  db: Db;
  logger: Logger;
  /** Longest wait for one answer (the whole enrichment is bounded by `deadlineSeconds` too). */
  requestTimeoutMs?: number;
}

/** MusicBrainz allows one request per second; the margin absorbs network jitter on the way there. */
export const MUSICBRAINZ_INTERVAL_MS = 1000 + 25;
/** AcoustID allows three requests per second. */
export const ACOUSTID_INTERVAL_MS = Math.ceil(1000 / 3) + 10;
const DEFAULT_REQUEST_TIMEOUT_MS = 5000;

export function buildEnrichmentPlan(config: FrozenConfig, deps: PlanDeps): EnrichmentPlan {
  if (!config.enrichment.enabled) return [];
  const settings = withoutTrailingSlashes(config.enrichment);

  const cache = createLookupCacheStore(deps.db);
  cache.purgeExpired();
  const lookups = new Lookups(cache);
  const userAgent = settings.contact.trim() === '' ? `svc/${VERSION}` : `svc/${VERSION} ( ${settings.contact.trim()} )`;
  const serviceDeps = (service: string, extra: Partial<ServiceClientOptions> = {}): ServiceDeps => ({
    client: new ServiceClient({ service, userAgent, timeoutMs: deps.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, ...extra }),
    lookups,
    logger: deps.logger,
  });
  const keyed = (name: string, apiKey: string): boolean => {
    if (apiKey.trim() !== '') return true;
    deps.logger.warn(`enrichment: ${name} is enabled but has no apiKey; it is skipped`);
    return false;
  };

  const recognition: Enricher[] = [];
  if (settings.acoustid.enabled && keyed('acoustid', settings.acoustid.apiKey)) {
    const { baseUrl, apiKey } = settings.acoustid;
    const limiter = processRateLimiter(new URL(baseUrl).origin, ACOUSTID_INTERVAL_MS);
    recognition.push(createAcoustId(serviceDeps('acoustid', { limiter, secrets: [apiKey] }), { baseUrl, apiKey }));
  }

  const identification: Enricher[] = [];
  if (settings.musicbrainz.enabled) {
    const { baseUrl } = settings.musicbrainz;
    if (settings.contact.trim() === '') {
      deps.logger.info('enrichment: MusicBrainz asks API users for a contact; set enrichment.contact to a URL or e-mail address');
    }
    const limiter = processRateLimiter(new URL(baseUrl).origin, MUSICBRAINZ_INTERVAL_MS);
    identification.push(createMusicBrainz(serviceDeps('musicbrainz', { limiter }), baseUrl));
  }

  const cover: Enricher[] = [];
  if (settings.coverartarchive.enabled) {
    cover.push(createCoverArtArchive(serviceDeps('coverartarchive'), settings.coverartarchive.baseUrl));
  }

  const artist: Enricher[] = [];
  if (settings.wikidata.enabled) {
    const wikipedia = settings.wikipedia.enabled ? new WikipediaClient(serviceDeps('wikipedia'), settings.wikipedia.baseUrl) : undefined;
    artist.push(
      createWikidata(serviceDeps('wikidata'), {
        baseUrl: settings.wikidata.baseUrl,
        commonsBaseUrl: settings.commons.baseUrl,
        language: settings.wikipedia.language,
        wikipedia,
      }),
    );
  }
  if (settings.theaudiodb.enabled && keyed('theaudiodb', settings.theaudiodb.apiKey)) {
    const { baseUrl, apiKey } = settings.theaudiodb;
    artist.push(createTheAudioDb(serviceDeps('theaudiodb', { secrets: [apiKey] }), { baseUrl, apiKey, language: settings.wikipedia.language }));
  }
  if (settings.fanarttv.enabled && keyed('fanarttv', settings.fanarttv.apiKey)) {
    const { baseUrl, apiKey } = settings.fanarttv;
    artist.push(createFanartTv(serviceDeps('fanarttv', { secrets: [apiKey] }), { baseUrl, apiKey }));
  }

  return [recognition, identification, cover, artist].filter((stage) => stage.length > 0);
}

type EnrichmentSettings = FrozenConfig['enrichment'];

/** `https://musicbrainz.org/ws/2/` and `https://musicbrainz.org/ws/2` mean the same. */
function withoutTrailingSlashes(settings: EnrichmentSettings): EnrichmentSettings {
  const trim = <T extends { baseUrl: string }>(service: T): T => ({ ...service, baseUrl: service.baseUrl.replace(/\/+$/, '') });
  return {
    ...settings,
    musicbrainz: trim(settings.musicbrainz),
    coverartarchive: trim(settings.coverartarchive),
    wikidata: trim(settings.wikidata),
    wikipedia: trim(settings.wikipedia),
    commons: trim(settings.commons),
    theaudiodb: trim(settings.theaudiodb),
    fanarttv: trim(settings.fanarttv),
    acoustid: trim(settings.acoustid),
  };
}
