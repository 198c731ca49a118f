import type { FrozenConfig } from '../config/schema';
import { errorMessage } from '../errors';
import type { Logger } from '../log';
import type { LookupCacheStore } from '../store/lookup-cache';
import type { RequestSlots } from '../store/store';
import { VERSION } from '../version';
import { createAcoustId } from './acoustid';
import { createCoverArtArchive } from './cover-art-archive';
import type { Enricher, EnrichmentPlan } from './enricher';
import { createFanartTv } from './fanarttv';
import { ServiceClient, type ServiceClientOptions } from './http';
import { Lookups } from './lookups';
import { createMusicBrainz, createMusicBrainzWorks } from './musicbrainz';
import { ServiceHealth } from './service-health';
import { RateLimiter, SharedRateLimiter, processRateLimiter, type Limiter, type LimiterClock } from './rate-limit';
import type { ServiceDeps } from './service-deps';
import { createTheAudioDb } from './theaudiodb';
import { createWikidata } from './wikidata';
import { WikipediaClient } from './wikipedia';

// The enrichers this configuration enables, in stage order (docs/enrichment.md): recognition
// (AcoustID), then MusicBrainz (by MBID, ISRC or search), then the cover, then the artist
// providers in parallel. With `enrichment.enabled: false` the plan is empty and no outbound
// request is ever made.

export interface PlanDeps {
  lookupCache: LookupCacheStore;
  /** The request spacing shared by every instance on one PostgreSQL database; absent with SQLite. */
  requestSlots?: RequestSlots;
  logger: Logger;
  /** Services that failed lately (the negative cache); GET /v1/status names them. */
  serviceHealth?: ServiceHealth;
  /** The clock of the request spacing (the process's own by default); tests move it by hand. */
  limiterClock?: LimiterClock;
}

/**
 * MusicBrainz allows one request per second, counted where requests arrive. The margin absorbs a
 * request delayed on its way (a busy event loop, a new connection, a GC pause) while the next one
 * leaves on time: with 25 ms, arrivals 975 ms apart were measured on a loaded machine.
 */
const MUSICBRAINZ_INTERVAL_MS = 1000 + 100;
/** AcoustID allows three requests per second. */
const ACOUSTID_INTERVAL_MS = Math.ceil(1000 / 3) + 10;
/** Longest wait for one answer (the whole enrichment is bounded by `deadlineSeconds` too). */
const REQUEST_TIMEOUT_MS = 5000;

type EnrichmentSettings = FrozenConfig['enrichment'];
type Stage = 'recognition' | 'identification' | 'cover' | 'artist';
/** Stages run in this order; the providers of one stage run in parallel. */
const STAGE_ORDER: readonly Stage[] = ['recognition', 'identification', 'cover', 'artist'];

/** One outside service: adding a provider means adding one entry here (and its config keys). */
interface ProviderEntry {
  /** Its key under `enrichment` in the config, and its name in logs and `enrichment_sources`. */
  name: 'acoustid' | 'musicbrainz' | 'coverartarchive' | 'wikidata' | 'theaudiodb' | 'fanarttv';
  stage: Stage;
  /** Present when the service needs an API key: the provider is skipped (with a warning) without one. */
  apiKey?: (settings: EnrichmentSettings) => string;
  /** The service's published rate limit, shared by every request of this process to its origin. */
  minIntervalMs?: number;
  create(deps: ServiceDeps, settings: EnrichmentSettings, depsFor: (service: string) => ServiceDeps): Enricher;
}

const PROVIDERS: readonly ProviderEntry[] = [
  {
    name: 'acoustid',
    stage: 'recognition',
    apiKey: (settings) => settings.acoustid.apiKey,
    minIntervalMs: ACOUSTID_INTERVAL_MS,
    create: (deps, settings) => createAcoustId(deps, { baseUrl: settings.acoustid.baseUrl, apiKey: settings.acoustid.apiKey }),
  },
  {
    name: 'musicbrainz',
    stage: 'identification',
    minIntervalMs: MUSICBRAINZ_INTERVAL_MS,
    create: (deps, settings) => {
      if (settings.contact.trim() === '') {
        deps.logger.info('enrichment: MusicBrainz asks API users for a contact; set enrichment.contact to a URL or e-mail address');
      }
      return createMusicBrainz(deps, settings.musicbrainz.baseUrl);
    },
  },
  {
    name: 'coverartarchive',
    stage: 'cover',
    create: (deps, settings) => createCoverArtArchive(deps, settings.coverartarchive.baseUrl),
  },
  {
    name: 'wikidata',
    stage: 'artist',
    create: (deps, settings, depsFor) =>
      createWikidata(deps, {
        baseUrl: settings.wikidata.baseUrl,
        commonsBaseUrl: settings.commons.baseUrl,
        language: settings.wikipedia.language,
        // The biography comes from Wikipedia, through the article the Wikidata item names.
        wikipedia: settings.wikipedia.enabled ? new WikipediaClient(depsFor('wikipedia'), settings.wikipedia.baseUrl) : undefined,
      }),
  },
  {
    name: 'theaudiodb',
    stage: 'artist',
    apiKey: (settings) => settings.theaudiodb.apiKey,
    create: (deps, settings) =>
      createTheAudioDb(deps, { baseUrl: settings.theaudiodb.baseUrl, apiKey: settings.theaudiodb.apiKey, language: settings.wikipedia.language }),
  },
  {
    name: 'fanarttv',
    stage: 'artist',
    apiKey: (settings) => settings.fanarttv.apiKey,
    create: (deps, settings) => createFanartTv(deps, { baseUrl: settings.fanarttv.baseUrl, apiKey: settings.fanarttv.apiKey }),
  },
  {
    // The works of the matched recording (ISWC, writers), beside the artist providers: the same
    // service, settings and one-request-a-second limit as the match above.
    name: 'musicbrainz',
    stage: 'artist',
    minIntervalMs: MUSICBRAINZ_INTERVAL_MS,
    create: (deps, settings) => createMusicBrainzWorks(deps, settings.musicbrainz.baseUrl),
  },
];

export function buildEnrichmentPlan(config: FrozenConfig, deps: PlanDeps): EnrichmentPlan {
  if (!config.enrichment.enabled) return [];
  const settings = withoutTrailingSlashes(config.enrichment);

  // Expired answers go in the background; a database that cannot do it now will next start.
  deps.lookupCache.purgeExpired().catch((error: unknown) => deps.logger.warn(`lookup cache: expired answers not purged: ${errorMessage(error)}`));
  const lookups = new Lookups(deps.lookupCache, Date.now, deps.serviceHealth ?? new ServiceHealth());
  const userAgent = settings.contact.trim() === '' ? `svc/${VERSION}` : `svc/${VERSION} ( ${settings.contact.trim()} )`;
  const serviceDeps = (service: string, extra: Partial<ServiceClientOptions> = {}): ServiceDeps => ({
    client: new ServiceClient({ service, userAgent, timeoutMs: REQUEST_TIMEOUT_MS, ...extra }),
    lookups,
    logger: deps.logger,
  });

  const enabled = PROVIDERS.filter((provider) => settings[provider.name].enabled);
  const enrichers = enabled.flatMap((provider) => {
    const apiKey = provider.apiKey?.(settings).trim();
    if (apiKey === '') {
      deps.logger.warn(`enrichment: ${provider.name} is enabled but has no apiKey; it is skipped`);
      return [];
    }
    const { baseUrl } = settings[provider.name];
    const limiter = provider.minIntervalMs === undefined ? undefined : rateLimiterFor(provider.name, new URL(baseUrl).origin, provider.minIntervalMs, deps);
    const extra: Partial<ServiceClientOptions> = { ...(limiter ? { limiter } : {}), ...(apiKey ? { secrets: [apiKey] } : {}) };
    const enricher = provider.create(serviceDeps(provider.name, extra), settings, (service) => serviceDeps(service));
    // Every provider asks through `lookups`: it can also run from the cache alone.
    const cached: Enricher = { name: enricher.name, answersFromCache: true, enrich: (track, context) => enricher.enrich(track, context) };
    return [{ stage: provider.stage, enricher: cached }];
  });
  return STAGE_ORDER.map((stage) => enrichers.filter((entry) => entry.stage === stage).map((entry) => entry.enricher)).filter((stage) => stage.length > 0);
}

/**
 * The process's limiter for a service origin; with PostgreSQL each request also takes the next
 * slot in the database, so the limit holds for every instance together (docs/decisions.md).
 */
function rateLimiterFor(service: string, origin: string, intervalMs: number, deps: PlanDeps): Limiter {
  // A clock of its own means a limiter of its own: the process's limiters keep the real one.
  const local = deps.limiterClock ? new RateLimiter(intervalMs, deps.limiterClock) : processRateLimiter(origin, intervalMs);
  if (!deps.requestSlots) return local;
  return new SharedRateLimiter(local, deps.requestSlots, `${service} ${origin}`, deps.logger);
}

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
