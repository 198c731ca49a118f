import type { Logger } from '../log';
import { NO_METRICS, type CounterPort, type MetricsPort } from '../metrics';
import type { LibraryFingerprint, LibraryStore, LibraryTags } from '../store/library';
import { startAudioStream, type AudioStream } from './audio-stream';
import { fingerprintPcm, SAMPLE_RATE, type AudioTools } from './audio-tools';
import { FingerprintIndex, type Match, type SearchOptions } from './fingerprint-index';
import { TitleTracker, type TitleEvent, type TrackerOptions } from './title-tracker';
import { RateCursor, searchRates, vinylRates, type VinylOptions } from './vinyl';
import { OnlineLookups } from './online-lookups';
import type { OnlineIdentifier } from './online';

// Recognition as a use case (docs/recognition.md): holds the library's index, listens to each
// stream it is handed (the Icecast listener's sources, the pulled streams), and turns the
// tracker's titles into submissions through the one port it is given, marked `recognition`
// with the match's score. A title the source itself sends on a channel wins: recognition stays
// quiet on that channel for `sourceHoldMs` after it, and never submits over it. A window that
// matches nothing on a vinyl stream (or on any stream that has missed for a while) is searched
// again at other playback rates (src/recognition/vinyl.ts), one rate search at a time per stream.

/** Chromaprint's items per second at 11,025 Hz (a frame every 4096/3 samples). */
export const ITEMS_PER_SECOND = 11_025 / (4096 / 3);
/** PCM kept past the window for the rate search: an item needs 19 frames (2.4 s) of audio. */
const PCM_EXTRA_SECONDS = 2.5;
/** PCM kept past an online sample: the decoder runs ahead of the fingerprinter's windows (src/recognition/online-lookups.ts). */
const ONLINE_PCM_AHEAD_SECONDS = 15;

export interface RecognitionOptions {
  tools: AudioTools;
  /** Seconds of audio each search looks at. */
  windowSeconds: number;
  search: SearchOptions;
  tracker: TrackerOptions;
  /** How long a title the source sent on a channel keeps recognition quiet there. */
  sourceHoldMs: number;
  /** The search at other playback rates (docs/recognition.md "Vinyl"). */
  vinyl: VinylOptions;
  /** Decode at the audio's own speed (the default); tests that send a file at once turn it off. */
  realTime?: boolean;
  /** Online lookups of what the library does not know (docs/recognition.md "Online lookups"); absent: none. */
  online?: { identifier: OnlineIdentifier; sampleSeconds: number; retryAfterSeconds: number; holdSeconds: number };
}

export interface RecognitionDeps {
  library: LibraryStore;
  /** Stores and announces a play's fields as a submission does (src/app/start-app.ts). */
  submit: (fields: Record<string, string>) => Promise<{ dbid: number }>;
  /** The title went away: the channel's play ends. */
  end: (channel: string) => Promise<unknown>;
  logger: Logger;
  now?: () => number;
  /** Counts windows matched and plays recognised per stream (GET /metrics, docs/running.md "Metrics"). */
  metrics?: MetricsPort;
}

export interface StreamStatus {
  name: string;
  channel: string;
  listening: boolean;
  /** Why it is not listening (the last problem), when it is not. */
  problem?: string;
  vinyl: boolean;
  lastMatch?: { artist?: string; title?: string; score: number; at: string; rate: number };
  title?: string;
  droppedBytes: number;
}

interface Listening {
  status: StreamStatus;
  stream: AudioStream | null;
  tracker: TitleTracker;
  rates: RateCursor;
  /** Windows in a row without a match at rate 1. */
  missed: number;
  /** A rate search runs: later windows are skipped until it answers. */
  searching: boolean;
}

export interface StreamHandle {
  write(bytes: Buffer): boolean;
  /** The stream is over (`reason`: why, for the status, e.g. "the source disconnected"; "the stream ended" if none). */
  end(reason?: string): void;
  /** Settles when the decoder and fingerprinter have finished (after end(), or on a failure), with the reason. */
  done: Promise<string>;
}

export class Recognition {
  private index = new FingerprintIndex([]);
  private tags = new Map<number, LibraryTags>();
  private readonly streams = new Map<string, Listening>();
  private readonly sourceTitles = new Map<string, number>();
  private reloading: Promise<void> | null = null;
  private reloadAgain = false;
  private readonly now: () => number;
  private readonly matches: CounterPort;
  private readonly recognised: CounterPort;
  private readonly rates: number[];
  private readonly online: OnlineLookups | null;

  constructor(
    private readonly deps: RecognitionDeps,
    private readonly options: RecognitionOptions,
  ) {
    this.now = deps.now ?? Date.now;
    this.rates = vinylRates(options.vinyl);
    const metrics = deps.metrics ?? NO_METRICS;
    this.matches = metrics.counter('svc_recognition_matches_total', 'Windows of audio the library matched, per stream.', ['stream']);
    this.recognised = metrics.counter('svc_recognition_plays_total', 'Recognised plays stored, per stream.', ['stream']);
    this.online = options.online ? this.onlineLookups(options.online) : null;
  }

  private onlineLookups(online: NonNullable<RecognitionOptions['online']>): OnlineLookups {
    const items = (seconds: number) => Math.round(seconds * ITEMS_PER_SECOND);
    const { identifier, sampleSeconds, retryAfterSeconds, holdSeconds } = online;
    const options = {
      sampleItems: items(sampleSeconds),
      retryItems: items(retryAfterSeconds),
      holdItems: items(holdSeconds),
      itemsPerSecond: ITEMS_PER_SECOND,
    };
    const deps = {
      identifier,
      logger: this.deps.logger,
      titled: (name: string) => this.streams.get(name)?.tracker.current() != null,
      submit: (stream: { name: string; channel: string }, fields: Record<string, string>) => this.submitOwn(stream.name, stream.channel, fields),
      end: (stream: { channel: string }) => {
        if (!this.sourceHolds(stream.channel)) void this.deps.end(stream.channel).catch(() => undefined);
      },
    };
    return new OnlineLookups(deps, options);
  }

  /** Reads the library into the index; again after each change (changes during a read are read next). */
  reload(): Promise<void> {
    if (this.reloading) {
      this.reloadAgain = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      do {
        this.reloadAgain = false;
        const tracks: LibraryFingerprint[] = await this.deps.library.fingerprints();
        this.index = new FingerprintIndex(tracks);
        this.tags = new Map(tracks.map((track) => [track.id, track.tags]));
      } while (this.reloadAgain);
    })().finally(() => {
      this.reloading = null;
    });
    return this.reloading;
  }

  librarySize(): number {
    return this.index.size;
  }

  /** A title the source sent on `channel` (a tag, an updinfo, a submission): recognition holds back there. */
  sourceTitled(channel: string): void {
    this.sourceTitles.set(channel, this.now());
    if (this.sourceTitles.size > 10_000) this.sourceTitles.delete(this.sourceTitles.keys().next().value ?? '');
  }

  /** Starts listening to a stream's bytes; the same name again replaces the earlier one. */
  listen(name: string, channel: string, vinyl: boolean, inputFormat?: string): StreamHandle {
    this.streams.get(name)?.stream?.close();
    const listening = this.listening({ name, channel, listening: true, vinyl, droppedBytes: 0 });
    this.streams.set(name, listening);
    const windowItems = Math.round(this.options.windowSeconds * ITEMS_PER_SECOND);
    let ended: (reason: string) => void = () => undefined;
    const done = new Promise<string>((resolve) => (ended = resolve));
    const stream = startAudioStream({
      tools: this.options.tools,
      windowItems,
      pcmSamples: Math.round(
        Math.max(
          this.searchesRatesEver(vinyl) ? this.options.windowSeconds + PCM_EXTRA_SECONDS : 0,
          this.online ? this.online.sampleSeconds + ONLINE_PCM_AHEAD_SECONDS : 0,
        ) * SAMPLE_RATE,
      ),
      ...(inputFormat ? { inputFormat } : {}),
      ...(this.options.realTime === false ? { realTime: false } : {}),
      onWindow: (items, position, pcm) => {
        if (items.length >= windowItems / 2) this.window(listening, items, position, pcm);
      },
      onEnd: (reason) => {
        listening.status.listening = false;
        listening.status.problem = reason;
        listening.status.droppedBytes = stream.dropped;
        listening.stream = null;
        this.deps.logger.info(`recognition: ${name} no longer listened to: ${reason}`);
        this.finishTitle(listening);
        this.online?.streamEnded(listening.status);
        ended(reason);
      },
    });
    listening.stream = stream;
    return {
      write: (bytes) => {
        const taken = stream.write(bytes);
        listening.status.droppedBytes = stream.dropped;
        return taken;
      },
      end: (reason) => stream.end(reason),
      done,
    };
  }

  /** A stream that is not listened to now, and why (a pulled stream that failed, waiting to connect again). */
  markProblem(name: string, channel: string, vinyl: boolean, problem: string): void {
    const known = this.streams.get(name);
    if (known?.stream) return;
    if (known) {
      known.status.problem = problem;
      known.status.listening = false;
      return;
    }
    this.streams.set(name, this.listening({ name, channel, listening: false, problem, vinyl, droppedBytes: 0 }));
  }

  private listening(status: StreamStatus): Listening {
    return { status, stream: null, tracker: new TitleTracker(this.options.tracker), rates: new RateCursor(this.rates), missed: 0, searching: false };
  }

  /** Whether a stream may ever be searched at other rates: marked vinyl, or any once it has missed for a while. */
  private searchesRatesEver(vinyl: boolean): boolean {
    return this.rates.length > 0 && this.options.vinyl.ratesPerWindow > 0 && (vinyl || this.options.vinyl.afterMissedWindows > 0);
  }

  status(): { library: number; streams: StreamStatus[] } {
    return { library: this.index.size, streams: [...this.streams.values()].map((listening) => ({ ...listening.status })) };
  }

  /** A stream that is gone for good (a pulled stream removed, shutdown). */
  forget(name: string): void {
    const listening = this.streams.get(name);
    listening?.stream?.close();
    this.streams.delete(name);
  }

  close(): void {
    this.online?.close();
    for (const listening of this.streams.values()) listening.stream?.close();
  }

  private window(listening: Listening, items: Uint32Array, position: number, pcm?: () => { pcm: Int16Array; position: number }): void {
    // One rate search at a time per stream: a window arriving meanwhile is skipped (the CPU bound).
    if (listening.searching) return;
    this.online?.window(listening.status, position + items.length, listening.tracker.current() !== null, pcm);
    const match = this.index.search(items, this.options.search);
    listening.missed = match ? 0 : listening.missed + 1;
    if (match) listening.rates.settle(null);
    const { vinyl } = this.options;
    const searchRatesNow = listening.status.vinyl || (vinyl.afterMissedWindows > 0 && listening.missed >= vinyl.afterMissedWindows);
    if (match || !pcm || !searchRatesNow || !this.searchesRatesEver(listening.status.vinyl)) {
      this.settle(listening, position, match, 1);
      return;
    }
    listening.searching = true;
    const held = pcm();
    const tools = this.options.tools;
    void searchRates(
      held.pcm,
      listening.rates.next(vinyl.ratesPerWindow),
      (bytes) => fingerprintPcm(tools, bytes),
      (query) => this.index.search(query, this.options.search),
    )
      .then((found) => {
        listening.rates.settle(found?.rate ?? null);
        // A stream that ended meanwhile gets no title from it.
        if (listening.stream === null || this.streams.get(listening.status.name) !== listening) return;
        if (found) this.settle(listening, Math.round(held.position), found.match, found.rate);
        else this.settle(listening, position, null, 1);
      })
      .finally(() => {
        listening.searching = false;
      });
  }

  /** One window's outcome, told to the stream's tracker. */
  private settle(listening: Listening, position: number, match: Match | null, rate: number): void {
    if (match) this.noteMatch(listening, match, rate);
    const event = listening.tracker.push({ position, match, rate });
    if (event) void this.apply(listening, event);
  }

  private noteMatch(listening: Listening, match: Match, rate: number): void {
    const tags = this.tags.get(match.trackId) ?? {};
    this.matches.inc({ stream: listening.status.name });
    listening.status.lastMatch = {
      ...(tags.artist !== undefined ? { artist: tags.artist } : {}),
      ...(tags.title !== undefined ? { title: tags.title } : {}),
      score: match.score,
      at: new Date(this.now()).toISOString(),
      rate,
    };
  }

  private sourceHolds(channel: string): boolean {
    const at = this.sourceTitles.get(channel);
    return at !== undefined && this.now() - at < this.options.sourceHoldMs;
  }

  private async apply(listening: Listening, event: TitleEvent): Promise<void> {
    const { channel, name } = listening.status;
    if (event.type === 'cleared') {
      this.finishTitle(listening);
      return;
    }
    const tags = this.tags.get(event.match.trackId) ?? {};
    listening.status.title = [tags.artist, tags.title].filter(Boolean).join(' - ');
    const fields: Record<string, string> = {
      ...tags,
      channel,
      recognition: 'fingerprint',
      recognition_score: String(event.match.score),
      recognition_stream: name,
    };
    if (event.rate !== 1) fields.recognition_rate = String(event.rate);
    await this.submitOwn(name, channel, fields);
  }

  /** A play recognition made, stored unless the source's own title holds the channel; a failure is logged. */
  private async submitOwn(name: string, channel: string, fields: Record<string, string>): Promise<void> {
    const title = JSON.stringify([fields.artist, fields.title].filter(Boolean).join(' - '));
    if (this.sourceHolds(channel)) {
      this.deps.logger.info(`recognition: ${name} heard ${title}; the source's own title on ${channel} stands`);
      return;
    }
    try {
      const result = await this.deps.submit(fields);
      this.recognised.inc({ stream: name });
      this.deps.logger.info(
        `recognition: ${name} recognised ${title} (${fields.recognition} score ${fields.recognition_score ?? 'none'}) as dbid ${result.dbid}`,
      );
    } catch (error) {
      this.deps.logger.warn(`recognition: ${name}: the recognised play was not stored (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  /** The recognised title is gone: its play ends, unless the source's own title holds the channel. */
  private finishTitle(listening: Listening): void {
    if (listening.status.title === undefined) return;
    delete listening.status.title;
    const { channel } = listening.status;
    if (this.sourceHolds(channel)) return;
    void this.deps.end(channel).catch(() => undefined);
  }
}
