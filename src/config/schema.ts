import { array, boolean, mixed, number, object, string, type InferType } from 'yup';
import { closestName, withArticle } from '../domain/edit-distance';
import { PLAY_KINDS, TRANSMISSION_CATEGORIES, type PlayKind } from '../domain/play';
import { isAllowedHostEntry } from '../domain/host-names';
import { isHttpUrl } from '../domain/http-url';
import { parseTemplate } from '../domain/template';
import { parseBlock } from '../domain/trusted-proxies';
import { DEFAULT_PORT, defaultDatabasePath } from './defaults';
import { OUTPUT_COMMON_KEYS, OUTPUT_TYPE_FACTS, OUTPUT_TYPES, talksUrlScheme, type OutputType } from './output-types';

export type { OutputType } from './output-types';

// One schema for the whole configuration (docs/decisions.md "Configuration"): types, limits and
// defaults live here, and `Config` is inferred from it.

const httpUrl = () => string().test('http-url', '${path} must be an http(s) URL', (value) => value === undefined || isHttpUrl(value));
const positiveSeconds = () => number().positive('${path} must be a positive number of seconds');
/** SoundExchange's transmission categories (docs/reports.md "Configuration"); empty: not set. */
const transmissionCategory = () =>
  string()
    .test(
      'category',
      '${path} must be one of: A, B, C, H, I, J, K (your statement of account names it)',
      (value) => value === undefined || value === '' || (TRANSMISSION_CATEGORIES as readonly string[]).includes(value),
    )
    .default('');
/** An IANA time zone; empty: this machine's. */
const timeZoneName = () =>
  string()
    .test('time-zone', '${path} must be an IANA time zone such as Europe/London', (value) => value === undefined || value === '' || isTimeZoneName(value))
    .default('');
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

const outputSchema = object({
  name: string()
    .required('${path} is required')
    .matches(/^[a-z0-9-]{1,64}$/, '${path} must be 1 to 64 of a-z, 0-9 and -'),
  type: string<OutputType>().required('${path} is required').oneOf(OUTPUT_TYPES, '${path} must be one of: ${values}'),
  url: string().matches(/^(https?|mqtts?|wss?|tcp):\/\/\S+$/, '${path} must be an http(s), mqtt(s), ws(s) or tcp URL'),
  secret: string().matches(/^whsec_[A-Za-z0-9+/=]{16,}$/, '${path} must be a Standard Webhooks secret: whsec_ and base64'),
  user: string().min(1),
  password: string().min(1),
  username: string().min(1),
  sid: positiveInteger(),
  format: string()
    .min(1)
    .test('template', '${path} must be a template such as "{{artist}} - {{title}}"', (value) => value === undefined || isTemplate(value)),
  topic: string().matches(/^[^#+\s]+$/, '${path} must be an MQTT topic without wildcards or spaces'),
  homeAssistant: boolean(),
  method: string<'GET' | 'POST'>().oneOf(['GET', 'POST'], '${path} must be GET or POST'),
  headers: mixed<Record<string, string>>((value): value is Record<string, string> => isHeaderMap(value)).typeError(
    '${path} must map header names to text values',
  ),
  body: string().test(
    'template',
    '${path} must be a template such as "artist={{artist}}&title={{title}}"',
    (value) => value === undefined || isTemplate(value),
  ),
  token: string().min(1),
  apiKey: string().min(1),
  apiSecret: string().min(1),
  sessionKey: string().min(1),
  input: string().min(1),
  imageInput: string().min(1),
  ps: string()
    .min(1)
    .test('template', '${path} must be a template such as "{{title}}"', (value) => value === undefined || isTemplate(value)),
  rtPlus: boolean(),
  path: string().min(1),
  imagePath: string().min(1),
  // Home Assistant's discovery prefix (its MQTT setting of that name); `homeassistant` unless changed there.
  discoveryPrefix: string().matches(/^[^#+\s]+$/, '${path} must be an MQTT topic without wildcards or spaces'),
  instance: string().matches(/^[A-Za-z0-9_.-]{1,64}$/, '${path} must be 1 to 64 of A-Z, a-z, 0-9, _, . and -'),
  retryForSeconds: positiveSeconds(),
  // docs/play-log.md "During, but not before": the output's messages wait this long after the change.
  delay: number().min(0, '${path} must be 0 or a positive number of seconds').max(600, '${path} must be at most 600 seconds').default(0),
  // docs/channels.md "Outputs": only this channel's plays; absent: every channel's.
  channel: string().min(1, '${path} must not be empty'),
}).test('output-keys', 'outputs: wrong keys', function checkKeys(value) {
  const spec = OUTPUT_TYPE_FACTS[value.type];
  if (!spec) return true;
  const present = Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined);
  const allowed = new Set<string>([...OUTPUT_COMMON_KEYS, ...spec.required, ...spec.optional]);
  const stray = present.find((key) => !allowed.has(key));
  if (stray) {
    const suggestion = closestName(stray, allowed);
    const hint = suggestion ? ` (did you mean "${suggestion}"?)` : '';
    return this.createError({ message: `${this.path}: ${withArticle(value.type)} output has no key "${stray}"${hint}` });
  }
  const missing = spec.required.find((key) => !present.includes(key));
  if (missing) return this.createError({ message: `${this.path}: ${withArticle(value.type)} output needs "${missing}"` });
  if (value.url !== undefined && !talksUrlScheme(value.type, value.url)) {
    return this.createError({ message: `${this.path}.url: the wrong scheme for ${withArticle(value.type)} output` });
  }
  // The URL's path is the webhook's token: never sent in the clear, except to this machine
  // (a local relay or a test), docs/outputs.md "discord".
  if (value.type === 'discord' && !isHttpsOrLoopback(value.url ?? ''))
    return this.createError({ message: `${this.path}.url: a discord output needs an https:// URL` });
  if (value.body !== undefined && value.method !== 'POST') return this.createError({ message: `${this.path}.body: a body is sent with method: POST only` });
  if ((value.imageInput === undefined) !== (value.imagePath === undefined)) {
    return this.createError({ message: `${this.path}: imageInput and imagePath go together (the Image source, and the file it shows)` });
  }
  return true;
});

/** `headers`: names as HTTP allows them, values on one line. */
function isHeaderMap(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.entries(value).every(([name, text]) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) && typeof text === 'string' && !/[\r\n]/.test(text));
}

function isBlock(entry: string): boolean {
  try {
    parseBlock(entry);
    return true;
  } catch {
    return false;
  }
}

function isHttpsOrLoopback(url: string): boolean {
  if (/^https:\/\//i.test(url)) return true;
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
  } catch {
    return false;
  }
}

function isTemplate(source: string): boolean {
  try {
    parseTemplate(source);
    return true;
  } catch {
    return false;
  }
}

/** `{field: regex}`: every field must match (case-insensitively) for the rule to apply. */
function isFieldMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length > 0;
}

/** Why a pattern is no regular expression (the engine's own words), or null when it is one. */
function regExpError(source: string): string | null {
  try {
    new RegExp(source, 'iu');
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

const kindRuleSchema = object({
  match: mixed<Record<string, string>>()
    .required('${path} is required')
    .test('patterns', '${path} must map field names to regular expressions', function checkPatterns(value) {
      if (!isFieldMap(value)) return false;
      for (const [field, pattern] of Object.entries(value)) {
        if (typeof pattern !== 'string') return this.createError({ message: `${this.path} field "${field}": must be a regular expression (a string)` });
        const error = regExpError(pattern);
        if (error !== null)
          return this.createError({ message: `${this.path} field "${field}": ${JSON.stringify(pattern)} is not a regular expression (${error})` });
      }
      return true;
    }),
  kind: string<PlayKind>()
    .required('${path} is required')
    .oneOf([...PLAY_KINDS], '${path} must be one of: ${values}'),
});

/** `{"/live.mp3": "main"}`: each mount of the server and the channel it carries. */
function isMountMap(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.entries(value).every(([mount, channel]) => mount.startsWith('/') && typeof channel === 'string' && channel !== '');
}

const playlogIcecastSchema = object({
  url: httpUrl().required('${path} is required'),
  adminUser: string().min(1).default('admin'),
  adminPassword: string().min(1).optional(),
  // Seconds between /admin/listclients polls; absent: this server is not polled (URL authentication only).
  poll: positiveSeconds().max(3600).optional(),
  // Empty when the channels that listen here name their mounts (channels[].audience, docs/channels.md).
  mounts: mixed<Record<string, string>>()
    .default({})
    .test('mounts', '${path} must map mounts ("/live.mp3") to channel names', (value) => value === undefined || isMountMap(value)),
});

// docs/channels.md: one declared channel, from the studio to the report.
const channelSchema = object({
  name: string()
    .required('${path} is required')
    .matches(/^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/, '${path} must be 1 to 64 letters, digits, spaces, dots, _ or - (starting with a letter or digit)'),
  // What feeds it: mounts on svc's Icecast listener, pulled streams (recognition.streams URLs),
  // and other names HTTP submissions may give it.
  ingest: object({
    mounts: array(string().defined().strict().matches(/^\//, '${path} must be a mount such as /live.ogg')).default([]),
    streams: array(httpUrl().defined().strict()).default([]),
    aliases: array(string().defined().strict().min(1)).default([]),
  }),
  // Whose listeners are its listeners: Icecast servers (by URL; credentials and polling in
  // playlog.icecast when polled) and their mounts.
  audience: array(
    object({
      url: httpUrl().required('${path} is required'),
      mounts: array(string().defined().strict().matches(/^\//, '${path} must be a mount such as /stream.mp3'))
        .min(1, '${path} must name at least one mount')
        .required('${path} is required'),
    }).defined(),
  ).default([]),
  // What its report rows say; empty: the reports.* value.
  report: object({
    service: string().default(''),
    category: transmissionCategory(),
    streamId: string().default(''),
    timeZone: timeZoneName(),
  }),
});

/** Names unique, and no mount, stream or alias claimed by two channels. */
interface ChannelClaims {
  name?: string;
  ingest?: { mounts?: readonly string[]; streams?: readonly string[]; aliases?: readonly string[] };
}

function channelsClash(list: readonly ChannelClaims[]): string | null {
  const owner = new Map<string, string>();
  for (const channel of list) {
    const name = channel.name ?? '';
    const ingest = channel.ingest ?? {};
    // Asked before the items' own defaults are filled in: any part may be missing.
    for (const claim of [name, ...(ingest.aliases ?? []), ...(ingest.mounts ?? []), ...(ingest.streams ?? [])]) {
      const other = owner.get(claim);
      if (other !== undefined && other !== name)
        return `channels: ${JSON.stringify(claim)} belongs to both ${JSON.stringify(other)} and ${JSON.stringify(name)}`;
      if (other !== undefined && claim === name) return `channels: the name ${JSON.stringify(claim)} is declared twice`;
      owner.set(claim, name);
    }
  }
  return null;
}

const recognitionStreamSchema = object({
  url: httpUrl().required('${path} is required'),
  channel: string().min(1, '${path} must not be empty').required('${path} is required'),
  vinyl: boolean().default(false),
});

export const configSchema = object({
  port: number().integer('${path} must be an integer').min(0).max(65535).default(DEFAULT_PORT),
  host: string().min(1).default('127.0.0.1'),
  secret: string().default(''),
  // A file holding the secret (a systemd credential: docs/running.md "A system service"); read at load, replaces `secret`.
  secretFile: string().default(''),
  // A string (`database: "<path or URL>"`) stands for `database.location` (config/load.ts).
  database: object({
    location: string()
      .min(1)
      .default(() => defaultDatabasePath()),
    // PostgreSQL: connections per instance for queries, plus one that LISTENs
    // (docs/several-instances.md "Connections and PgBouncer"); ten instances fit in the default max_connections 100.
    poolSize: positiveInteger().max(100).default(4),
    // A direct connection for LISTEN and the migration lock when `location` goes through a
    // transaction-mode pooler such as PgBouncer (docs/several-instances.md "PgBouncer"); empty: `location`.
    listenUrl: string()
      .default('')
      .test('postgres-url', '${path} must be a postgres:// or postgresql:// URL', (value) => !value || /^postgres(ql)?:\/\//i.test(value)),
  }),
  processingTimeoutSeconds: positiveSeconds().default(30),
  maxFieldLength: positiveInteger().default(1000),
  // The same artist and title as the current track within this many seconds is the same play
  // (docs/title-first.md "The same track twice"); 0 turns it off.
  dedupeSeconds: number().min(0, '${path} must be 0 or a positive number of seconds').default(600),
  maxBodyBytes: positiveInteger().default(1048576),
  corsOrigins: array(string().defined().strict()).default(['*']),
  // docs/decisions.md "Hostile clients and browsers": browser writes only from these origins
  // (default: same origin only), and the Host names a loopback listener answers besides
  // localhost and loopback addresses (DNS rebinding).
  writeOrigins: array(string().defined().strict()).default([]),
  allowedHosts: array(
    string()
      .defined()
      .strict()
      .test(
        'host-name',
        '${path} must be a host name such as np.example.net, or *.example.net for the names one label under it (no port, no other wildcard)',
        (value) => isAllowedHostEntry(value),
      ),
  ).default([]),
  // docs/security.md "A public name needs the secret": true keeps writes open without a secret
  // on a public name (allowedHosts, a non-loopback host, trustProxy); svc serve refuses that otherwise.
  openWrites: boolean().default(false),
  // docs/running.md "Behind a proxy": the proxies whose X-Forwarded-For / Forwarded is believed
  // (addresses or CIDR blocks); nothing by default.
  trustProxy: array(
    string()
      .defined()
      .strict()
      .test('address-or-cidr', '${path} must be an IP address or a CIDR block such as 10.0.0.0/8', (value) => isBlock(value)),
  ).default([]),
  limits: object({
    maxConnections: positiveInteger().default(10000),
    // 0 turns the per-address cap off (behind a reverse proxy every client has its address).
    maxConnectionsPerAddress: number().integer('${path} must be an integer').min(0).default(512),
    maxFields: positiveInteger().default(200),
    maxQueuedBytes: positiveInteger().default(64 * 1024 * 1024),
    // docs/limits-and-load.md "Records": a stored record's JSON, and the elements of one list.
    maxRecordBytes: number().integer('${path} must be an integer').min(1024, '${path} must be at least 1024').default(65536),
    maxListItems: positiveInteger().default(100),
    // docs/limits-and-load.md "Connections": a request head must arrive within this (else 408),
    // and a connection that has sent nothing for as long is closed.
    headersTimeoutSeconds: positiveSeconds().default(10),
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
      baseUrl: httpUrl().default('https://{lang}.wikipedia.org'),
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
  outputs: array(outputSchema.defined())
    .default([])
    .test('unique-names', 'outputs: names must be unique', (list) => new Set((list ?? []).map((output) => output.name)).size === (list ?? []).length),
  // docs/chat-bots-and-obs.md: what /v1/last.txt and /index.txt say while nothing is playing.
  pages: object({
    idleText: string().default(''),
  }),
  // docs/whats-now-playing.md "Found on the network": announce svc as _whatsnowplaying._tcp over mDNS
  // when it listens beyond loopback.
  mdns: object({
    advertise: boolean().default(true),
  }),
  // docs/running.md "Metrics": GET /metrics in the Prometheus text format; off by default.
  metrics: object({
    enabled: boolean().default(false),
    // The shared secret on scrapes too (X-SVC-Client-Auth, or Authorization: Bearer).
    requireSecret: boolean().default(false),
  }),
  // docs/song-requests.md: What's Now Playing's request queue API; off: writes 403, reads empty.
  requests: object({
    enabled: boolean().default(true),
  }),
  // docs/whats-now-playing.md "One frame per change": WNP's sockets send a track once its images are known.
  wsstream: object({
    complete: boolean().default(true),
    completeWaitSeconds: number().min(0, '${path} must be 0 or a positive number of seconds').max(30, '${path} must be at most 30 seconds').default(4),
    // WNP's artistextras/coverfornothumbs: the cover stands in for a missing artist thumbnail.
    coverForNoThumbs: boolean().default(true),
    // /wsartistfanartstream: seconds between fanart frames (What's Now Playing's 8).
    fanartSeconds: number().min(1, '${path} must be at least 1 second').default(8),
  }),
  // docs/dj-software.md: a listener that DJ software takes for an Icecast server; off without a port.
  icecastSource: object({
    port: number().integer('${path} must be an integer').min(0).max(65535).optional(),
    password: string().optional(),
  }),
  // docs/reports.md "Configuration": what the report files say about the station.
  reports: object({
    service: string().default(''),
    // SoundExchange's transmission categories; empty: not set (the check names it).
    category: transmissionCategory(),
    minSeconds: number().min(0, '${path} must be 0 or a positive number of seconds').default(0),
    timeZone: timeZoneName(),
    stationType: string<'AM' | 'FM' | 'OT'>().oneOf(['AM', 'FM', 'OT'], '${path} must be one of: ${values}').default('OT'),
    stationFormat: string().default(''),
    // docs/reports-us.md "SoundExchange": 37 CFR 370.4(e)(8) or (e)(7), and the file name pattern.
    soundexchange: object({
      layout: string<'e8' | 'e7'>().oneOf(['e8', 'e7'], '${path} must be one of: ${values}').default('e8'),
      fileName: string<'regulation' | '2007'>().oneOf(['regulation', '2007'], '${path} must be one of: ${values}').default('regulation'),
    }),
    // The contact rows of the (e)(7) header block.
    contact: object({
      name: string().default(''),
      street: string().default(''),
      city: string().default(''),
      phone: string().default(''),
      email: string().default(''),
    }),
  }),
  // docs/channels.md: the declared channels; empty: one channel "main" holds everything.
  channels: array(channelSchema.defined())
    .default([])
    .test('clash', 'channels: a name, mount, stream or alias belongs to two channels', function checkClash(list) {
      const clash = channelsClash(list ?? []);
      return clash === null ? true : this.createError({ message: clash });
    }),
  // docs/play-log.md: air times, kinds, channels and listeners of every play.
  playlog: object({
    startedAtPastSeconds: number().min(0).default(600),
    startedAtFutureSeconds: number().min(0).default(5),
    kindRules: array(kindRuleSchema.defined()).default([]),
    // Plays with a duration below this many seconds are not music (0: off); they get shortItemKind.
    shortItemSeconds: number().min(0).default(0),
    shortItemKind: string<PlayKind>()
      .oneOf([...PLAY_KINDS], '${path} must be one of: ${values}')
      .default('jingle'),
    // Warn on the US performance complement (17 U.S.C. 114(j)(13)); for stations under that licence.
    complement: boolean().default(false),
    minSessionSeconds: number().min(0).default(0),
    // docs/play-log.md "Sessions that must be plausible": open sessions per Icecast mount, and a session's longest life.
    maxOpenSessionsPerMount: positiveInteger().default(100_000),
    sessionMaxHours: number()
      .positive('${path} must be a positive number of hours')
      .max(24 * 366)
      .default(24),
    keepAddresses: boolean().default(false),
    icecast: array(playlogIcecastSchema.defined()).default([]),
  }),
  // docs/recognition.md: recognising the audio of the listener's sources and of pulled streams.
  recognition: object({
    enabled: boolean().default(false),
    // Streams svc connects to as a listener, each the audio of one channel.
    streams: array(recognitionStreamSchema.defined()).default([]),
    // Channels (listener mounts) whose audio comes off a turntable: resampled copies are searched too.
    vinylChannels: array(string().defined()).default([]),
    windowSeconds: number().min(4, '${path} must be at least 4 seconds').max(20, '${path} must be at most 20 seconds').default(8),
    clearAfterWindows: number().integer().min(1).max(60).default(4),
    maxBitError: number().min(0.05).max(0.45).default(0.3),
    sourceHoldSeconds: number().min(0).default(900),
    reconnectMaxSeconds: positiveSeconds().max(3600).default(60),
    // The search at other playback rates on a miss (docs/recognition.md "Vinyl").
    vinylSearch: object({
      maxPercent: number().min(0).max(15).default(8),
      stepPercent: number().min(0.1).max(5).default(0.5),
      ratesPerWindow: number().integer().min(0).max(64).default(8),
      afterMissedWindows: number().integer().min(0).max(10_000).default(15),
    }),
    // Online lookups of what the library does not know, with the user's own key (docs/recognition.md "Online lookups").
    online: object({
      service: string().oneOf(['', 'acoustid', 'acrcloud', 'audd'], '${path} must be one of acoustid, acrcloud, audd (or empty: none)').default(''),
      apiKey: string().default(''),
      apiSecret: string().default(''),
      baseUrl: string()
        .test('http-url', '${path} must be an http(s) URL', (value) => value === undefined || value === '' || isHttpUrl(value))
        .default(''),
      sampleSeconds: number().min(0).max(120).default(0),
      retryAfterSeconds: number().min(10).max(86_400).default(300),
      holdSeconds: number().min(10).max(3600).default(240),
      minIntervalSeconds: number().min(0).max(3600).default(1),
      timeoutSeconds: positiveSeconds().max(120).default(20),
    }),
    tools: object({
      ffmpeg: string().min(1).default('ffmpeg'),
      ffprobe: string().min(1).default('ffprobe'),
      sox: string().min(1).default('sox'),
      fpcalc: string().min(1).default('fpcalc'),
    }),
  }),
  // Your own files (templates, fonts, images) for the pages, served at /static/ and
  // /httpstatic/ (docs/first-hour.md "Your own files"); empty: nothing is served there.
  staticDir: string().default(''),
  // Empty: the client talks to the server this config describes (config/client-target.ts).
  client: object({
    url: string()
      .test('http-url', '${path} must be an http(s) URL', (value) => value === undefined || value === '' || isHttpUrl(value))
      .default(''),
    secret: string().default(''),
  }),
});

function isTimeZoneName(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export type Config = InferType<typeof configSchema>;

/** Deeply read-only view handed to the rest of the program once loading is done. */
export type FrozenConfig = DeepReadonly<Config>;
type DeepReadonly<T> = T extends (infer U)[] ? readonly DeepReadonly<U>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;
