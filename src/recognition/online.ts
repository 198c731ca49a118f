// Online lookups (docs/recognition.md "Online lookups"): the one small interface an outside
// recognition service sits behind (AcoustID, ACRCloud, AudD: src/recognition/online-*.ts), the
// sample it is handed, and when a stream's audio is looked up. Pure: positions are the
// stream's, in fingerprint items, so nothing here reads a clock.

/** Which service, as config `recognition.online.service` names it and a play's `recognition` field records it. */
export type OnlineService = 'acoustid' | 'acrcloud' | 'audd';

/** The audio of one stretch of a stream: 11,025 Hz mono 16-bit PCM. */
export interface OnlineSample {
  pcm: Int16Array;
  sampleRate: number;
}

/** What a service answered, in svc's field names; `score` 0..1 when the service gives one. */
export interface OnlineMatch {
  tags: Partial<Record<'artist' | 'title' | 'album' | 'isrc' | 'label' | 'musicbrainzrecordingid', string>>;
  score?: number;
  /** Seconds of the track still to play after the sample's end, when the answer tells. */
  remainingSeconds?: number;
}

export interface OnlineIdentifier {
  readonly service: OnlineService;
  /** The track in the sample, null when the service knows none; rejects on a failure or an error answer. */
  identify(sample: OnlineSample, signal: AbortSignal): Promise<OnlineMatch | null>;
}

/** A WAV file (RIFF, PCM 16-bit mono) of the sample: what ACRCloud and AudD are sent. */
export function wavFile(sample: OnlineSample): Buffer {
  const data = Buffer.from(sample.pcm.buffer, sample.pcm.byteOffset, sample.pcm.byteLength);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sample.sampleRate, 24);
  header.writeUInt32LE(sample.sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

export interface TurnOptions {
  /** Items of audio without a library title before it is looked up (the sample's length). */
  sampleItems: number;
  /** After a lookup that found nothing (or failed): items before the audio counts as a new play. */
  retryItems: number;
  /** After a match whose answer tells no remaining length: items the online title holds. */
  holdItems: number;
}

export type TurnEvent = 'lookup' | 'ended' | null;

/**
 * When one stream is looked up: once per play. A play here starts where the library has no
 * title (the stream's start, a library title cleared) and is looked up once its first
 * `sampleItems` have played without one. A match holds until the track's remaining length (or
 * `holdItems`) has played, then a new play starts; nothing found waits `retryItems`. A library
 * title ends it all at once: the library always wins.
 */
export class OnlineTurns {
  private start: number | null = null;
  private state: 'waiting' | 'asking' | 'held' | 'done' = 'waiting';
  private until = 0;

  constructor(private readonly options: TurnOptions) {}

  /** One window ending at stream position `now`; `titled`: the library shows a title now. */
  window(now: number, titled: boolean): TurnEvent {
    if (titled) {
      const wasHeld = this.state === 'held';
      this.start = null;
      this.state = 'waiting';
      return wasHeld ? 'ended' : null;
    }
    this.start ??= now;
    if (this.state === 'asking') return null;
    if (this.state === 'held' || this.state === 'done') {
      if (now < this.until) return null;
      const wasHeld = this.state === 'held';
      this.state = 'waiting';
      this.start = now;
      return wasHeld ? 'ended' : null;
    }
    if (now - this.start < this.options.sampleItems) return null;
    this.state = 'asking';
    return 'lookup';
  }

  /** The lookup started at `now` answered: a match (and the items it has still to play) or none. */
  answered(now: number, match: { remainingItems?: number } | null): void {
    if (this.state !== 'asking') return;
    this.state = match ? 'held' : 'done';
    this.until = now + (match ? (match.remainingItems ?? this.options.holdItems) : this.options.retryItems);
  }

  /** Whether an online title holds the stream now. */
  holding(): boolean {
    return this.state === 'held';
  }
}
