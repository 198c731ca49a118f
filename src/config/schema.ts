import { array, boolean, number, object, string, type InferType } from 'yup';
import { DEFAULT_PORT, defaultDatabasePath } from './defaults';

// One schema for the whole configuration (decisions.md "Configuration"): types, limits and
// defaults live here, and `Config` is inferred from it.

const httpUrl = () => string().matches(/^https?:\/\/\S+$/, '${path} must be an http(s) URL');
const positiveSeconds = () => number().positive('${path} must be a positive number of seconds');
const positiveInteger = () => number().integer('${path} must be an integer').min(1, '${path} must be at least 1');

function provider(baseUrl: string, enabled = true) {
  return object({
    enabled: boolean().default(enabled),
    baseUrl: httpUrl().default(baseUrl),
  });
}

function keyedProvider(baseUrl: string, enabled: boolean, apiKey: string) {
  return object({
    enabled: boolean().default(enabled),
    baseUrl: httpUrl().default(baseUrl),
    apiKey: string().default(apiKey),
  });
}

export const configSchema = object({
  port: number().integer('${path} must be an integer').min(0).max(65535).default(DEFAULT_PORT),
  host: string().min(1).default('127.0.0.1'),
  secret: string().default(''),
  // A string (`database: "<path or URL>"`) stands for `database.location` (config/load.ts).
  database: object({
    location: string()
      .min(1)
      .default(() => defaultDatabasePath()),
    // PostgreSQL: connections per instance for queries, plus one that LISTENs
    // (docs/several-instances.md "Connections"); ten instances fit in the default max_connections 100.
    poolSize: positiveInteger().max(100).default(4),
  }),
  processingTimeoutSeconds: positiveSeconds().default(30),
  maxFieldLength: positiveInteger().default(1000),
  maxBodyBytes: positiveInteger().default(1048576),
  corsOrigins: array(string().defined().strict()).default(['*']),
  // decisions.md "Hostile clients and browsers": browser writes only from these origins
  // (default: same origin only), and the Host names a loopback listener answers besides
  // localhost and loopback addresses (DNS rebinding).
  writeOrigins: array(string().defined().strict()).default([]),
  allowedHosts: array(string().defined().strict()).default([]),
  limits: object({
    maxConnections: positiveInteger().default(10000),
    // 0 turns the per-address cap off (behind a reverse proxy every client has its address).
    maxConnectionsPerAddress: number().integer('${path} must be an integer').min(0).default(512),
    maxFields: positiveInteger().default(200),
    maxQueuedBytes: positiveInteger().default(64 * 1024 * 1024),
  }),
  coverFetch: object({
    allowPrivateAddresses: boolean().default(false),
  }),
  images: object({
    maxTotalBytes: positiveInteger().default(1073741824),
    maxConcurrentDownloads: positiveInteger().default(4),
    // Image bytes kept in memory by key (store/image-memory-cache.ts); 0 turns it off.
    memoryCacheBytes: number()
      .integer('${path} must be an integer')
      .min(0)
      .default(64 * 1024 * 1024),
  }),
  enrichment: object({
    enabled: boolean().default(true),
    deadlineSeconds: positiveSeconds().default(10),
    contact: string().default(''),
    musicbrainz: provider('https://musicbrainz.org/ws/2'),
    coverartarchive: provider('https://coverartarchive.org'),
    wikidata: provider('https://www.wikidata.org'),
    wikipedia: object({
      enabled: boolean().default(true),
      baseUrl: string()
        .matches(/^https?:\/\/\S+$/, '${path} must be an http(s) URL')
        .default('https://{lang}.wikipedia.org'),
      language: string()
        .matches(/^[a-z][a-z-]{1,15}$/, '${path} must be a Wikipedia language code such as "en"')
        .default('en'),
    }),
    commons: object({
      baseUrl: httpUrl().default('https://commons.wikimedia.org'),
    }),
    theaudiodb: keyedProvider('https://www.theaudiodb.com/api/v1/json', true, '123'),
    fanarttv: keyedProvider('https://webservice.fanart.tv/v3', false, ''),
    acoustid: keyedProvider('https://api.acoustid.org/v2', false, ''),
  }),
  client: object({
    url: httpUrl().default('http://127.0.0.1:8899'),
    secret: string().default(''),
  }),
});

export type Config = InferType<typeof configSchema>;

/** Deeply read-only view handed to the rest of the program once loading is done. */
export type FrozenConfig = DeepReadonly<Config>;
type DeepReadonly<T> = T extends (infer U)[] ? readonly DeepReadonly<U>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;
