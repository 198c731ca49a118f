import { errorMessage } from '../errors';
import { ServiceClient } from '../enrich/http';
import { processRateLimiter, type Limiter } from '../enrich/rate-limit';
import type { Logger } from '../log';
import { compressedFingerprint, SAMPLE_RATE, type AudioTools } from './audio-tools';
import { OnlineTurns, type OnlineIdentifier, type OnlineMatch, type OnlineService, type TurnOptions } from './online';
import { createAcoustIdLookup } from './online-acoustid';
import { createAcrCloudLookup } from './online-acrcloud';
import { createAudDLookup } from './online-audd';

// The online lookups of the streams (docs/recognition.md "Online lookups"): with the user's own
// key, a stretch of a stream that the library does not know is sent once per play to the
// configured service; a match is submitted as a library match is, marked with the service's
// name and score. A failure, an error answer or nothing found leaves the stretch untitled
// and says so in the log; nothing else waits for it. One lookup at a time per stream, spaced
// per service (AcoustID: 3 requests a second).

/** config `recognition.online`, as the lookups need it. */
export interface OnlineSettings {
  service: '' | OnlineService;
  apiKey: string;
  apiSecret: string;
  baseUrl: string;
  sampleSeconds: number;
  retryAfterSeconds: number;
  holdSeconds: number;
  minIntervalSeconds: number;
  timeoutSeconds: number;
}

const DEFAULT_URLS: Readonly<Record<OnlineService, string>> = {
  acoustid: 'https://api.acoustid.org/v2',
  acrcloud: 'https://identify-eu-west-1.acrcloud.com',
  audd: 'https://api.audd.io/',
};
/** The sample each service is sent when `sampleSeconds` is 0: AcoustID its first 30 s, the others 12 s (ACRCloud asks for under 15). */
const DEFAULT_SAMPLE_SECONDS: Readonly<Record<OnlineService, number>> = { acoustid: 30, acrcloud: 12, audd: 12 };
/** AcoustID allows 3 requests a second (docs/enrichment.md). */
const ACOUSTID_INTERVAL_MS = 334;

/** The configured service, or why there is none (no service named, no key): then nothing is looked up. */
export function createOnlineIdentifier(
  settings: OnlineSettings,
  tools: AudioTools,
  userAgent: string,
  limiter?: Limiter,
): { identifier: OnlineIdentifier; sampleSeconds: number } | { off: string } {
  const service = settings.service;
  if (service === '') return { off: 'no service configured' };
  if (settings.apiKey === '' || (service === 'acrcloud' && settings.apiSecret === '')) return { off: `${service} needs the user's own key` };
  const baseUrl = (settings.baseUrl || DEFAULT_URLS[service]).replace(/\/$/, service === 'audd' ? '/' : '');
  const origin = new URL(baseUrl).origin;
  const interval = service === 'acoustid' ? Math.max(ACOUSTID_INTERVAL_MS, settings.minIntervalSeconds * 1000) : settings.minIntervalSeconds * 1000;
  const client = new ServiceClient({
    service,
    userAgent,
    timeoutMs: settings.timeoutSeconds * 1000,
    limiter: limiter ?? processRateLimiter(origin, interval),
    maxAttempts: 1,
    secrets: [settings.apiKey, settings.apiSecret],
  });
  const sampleSeconds = settings.sampleSeconds || DEFAULT_SAMPLE_SECONDS[service];
  const identifier =
    service === 'acoustid'
      ? createAcoustIdLookup({ baseUrl, apiKey: settings.apiKey, client, fingerprint: (pcm) => compressedFingerprint(tools, pcm) })
      : service === 'acrcloud'
        ? createAcrCloudLookup({ baseUrl, accessKey: settings.apiKey, accessSecret: settings.apiSecret, client })
        : createAudDLookup({ baseUrl, apiToken: settings.apiKey, client });
  return { identifier, sampleSeconds };
}

export interface OnlineStream {
  name: string;
  channel: string;
}

export interface OnlineLookupsDeps {
  identifier: OnlineIdentifier;
  logger: Logger;
  /** Stores the play (recognition's own submission, which gives way to the source's title). */
  submit: (stream: OnlineStream, fields: Record<string, string>) => Promise<void>;
  /** The online title's play ends (the track's time is up). */
  end: (stream: OnlineStream) => void;
  /** Whether the library titles the stream now (it wins over an answer that arrives late). */
  titled: (name: string) => boolean;
}

export interface OnlineLookupsOptions extends TurnOptions {
  itemsPerSecond: number;
}

export class OnlineLookups {
  private readonly turns = new Map<string, OnlineTurns>();
  private readonly controller = new AbortController();

  constructor(
    private readonly deps: OnlineLookupsDeps,
    private readonly options: OnlineLookupsOptions,
  ) {}

  /** Seconds of PCM a stream keeps for its sample. */
  get sampleSeconds(): number {
    return this.options.sampleItems / this.options.itemsPerSecond;
  }

  /**
   * One window of a stream, ending at position `now` (items); `pcm` reads the stream's last PCM
   * and the stream position (items) of its first sample, when known.
   */
  window(stream: OnlineStream, now: number, titled: boolean, pcm: (() => { pcm: Int16Array; position?: number }) | undefined): void {
    let turns = this.turns.get(stream.name);
    if (!turns) {
      turns = new OnlineTurns(this.options);
      this.turns.set(stream.name, turns);
    }
    const event = turns.window(now, titled);
    if (event === 'ended' && !titled) this.deps.end(stream);
    if (event !== 'lookup') return;
    const sample = this.sampleEndingAt(now, pcm?.());
    if (!sample) {
      turns.answered(now, null);
      return;
    }
    void this.lookUp(stream, turns, now, sample);
  }

  /**
   * The sample that ends where the window does: the decoder's PCM runs ahead of the
   * fingerprinter's windows (by seconds when a stream arrives faster than real time), and its
   * newest audio may already be the next track's. Null when too little of it is held.
   */
  private sampleEndingAt(now: number, held: { pcm: Int16Array; position?: number } | undefined): Int16Array | null {
    if (!held) return null;
    const samples = Math.round(this.sampleSeconds * SAMPLE_RATE);
    const perItem = SAMPLE_RATE / this.options.itemsPerSecond;
    const end = held.position === undefined ? held.pcm.length : Math.max(0, Math.min(held.pcm.length, Math.round((now - held.position) * perItem)));
    const start = Math.max(0, end - samples);
    return end - start >= samples * 0.9 ? held.pcm.subarray(start, end) : null;
  }

  /** A stream gone: its online title's play ends with it. */
  streamEnded(stream: OnlineStream): void {
    const turns = this.turns.get(stream.name);
    this.turns.delete(stream.name);
    if (turns?.holding()) this.deps.end(stream);
  }

  close(): void {
    this.controller.abort(new Error('closed'));
  }

  private async lookUp(stream: OnlineStream, turns: OnlineTurns, now: number, pcm: Int16Array): Promise<void> {
    const service = this.deps.identifier.service;
    let match: OnlineMatch | null = null;
    let failed = false;
    try {
      match = await this.deps.identifier.identify({ pcm, sampleRate: SAMPLE_RATE }, this.controller.signal);
    } catch (error) {
      failed = true;
      this.deps.logger.warn(`recognition: ${stream.name}: the ${service} lookup failed, no title (${errorMessage(error)})`);
    }
    // A stream replaced, ended or titled by the library meanwhile gets nothing from this answer.
    if (this.turns.get(stream.name) !== turns || this.deps.titled(stream.name)) return;
    const remaining = match?.remainingSeconds;
    turns.answered(now, match ? (remaining !== undefined ? { remainingItems: Math.round(remaining * this.options.itemsPerSecond) } : {}) : null);
    if (!match) {
      if (!failed) this.deps.logger.info(`recognition: ${stream.name}: ${service} knows no track in the sample`);
      return;
    }
    const fields: Record<string, string> = { ...match.tags, channel: stream.channel, recognition: service, recognition_stream: stream.name };
    if (match.score !== undefined) fields.recognition_score = String(Math.round(match.score * 1000) / 1000);
    await this.deps.submit(stream, fields);
  }
}
