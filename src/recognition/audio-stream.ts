import { spawn, type ChildProcess } from 'node:child_process';
import { FPCALC_PCM_ARGS, PCM_ARGS, type AudioTools } from './audio-tools';
import { PcmRing } from './vinyl';

// One stream's audio turned into a continuous fingerprint (docs/recognition.md "Listening"): one
// long-lived ffmpeg reads the stream's bytes on stdin and writes 11,025 Hz mono PCM, read at
// real time (`-re`: a source sending faster costs no more CPU, the surplus is dropped here); one
// long-lived fpcalc in chunk mode (`-chunk 2 -overlap`) reads that PCM and prints the items of
// every 2 s, which laid end to end are the fingerprint of the whole stream (the chunks of
// `-overlap` match a whole-file `fpcalc -raw -length 0` item for item). The items go into a
// bounded ring; each chunk hands the last window to `onWindow`. When asked, the last seconds of
// the PCM itself are kept too, in a ring of their own (the vinyl search resamples them).

/** Bytes of the stream waiting for ffmpeg; past this they are dropped (a bound, whatever the source sends). */
export const MAX_PENDING_BYTES = 512 * 1024;

export interface AudioStreamOptions {
  tools: AudioTools;
  /** Items a window holds (about 8 a second). */
  windowItems: number;
  /**
   * Told every chunk: the last `windowItems` items (fewer at the start) and the stream position
   * of the first; `pcm` reads the PCM ring (when `pcmSamples` asked for one).
   */
  onWindow: (items: Uint32Array, position: number, pcm?: () => { pcm: Int16Array; position: number }) => void;
  /** Samples of PCM to keep (0 or absent: none). */
  pcmSamples?: number;
  /** ffmpeg or fpcalc ended: the stream is not listened to any more (the reason, as a line). */
  onEnd: (reason: string) => void;
  /** ffmpeg's input format (`-f`), when the container is known and probing would be slower. */
  inputFormat?: string;
  /** Decode at the speed the audio plays (`-re`, the default); tests that send a file at once turn it off. */
  realTime?: boolean;
}

export interface AudioStream {
  /** Hands the stream's bytes to the decoder; false when they were dropped. */
  write(bytes: Buffer): boolean;
  /** The source ended: the decoder finishes what it has, then ends; `reason` is then the end's reason ("the stream ended" if none). */
  end(reason?: string): void;
  /** Stops both programs now. */
  close(): void;
  /** Bytes dropped so far (a source faster than real time, a stuck decoder). */
  readonly dropped: number;
}

/** Chromaprint items parsed from fpcalc's chunk output, line by line. */
export class ChunkParser {
  private partial = '';

  push(text: string): Uint32Array[] {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    // A line without a newline yet stays bounded: no real item line is near this long.
    if (this.partial.length > 1024 * 1024) this.partial = '';
    const chunks: Uint32Array[] = [];
    for (const line of lines) {
      if (!line.startsWith('FINGERPRINT=')) continue;
      const body = line.slice('FINGERPRINT='.length).trim();
      if (body === '') continue;
      chunks.push(Uint32Array.from(body.split(',').map((item) => Number(item) >>> 0)));
    }
    return chunks;
  }
}

/** The last `capacity` items of a stream and the stream position of the first of them. */
export class ItemRing {
  private readonly items: Uint32Array;
  private filled = 0;
  private total = 0;

  constructor(private readonly capacity: number) {
    this.items = new Uint32Array(capacity);
  }

  push(chunk: Uint32Array): void {
    const piece = chunk.length > this.capacity ? chunk.subarray(chunk.length - this.capacity) : chunk;
    const keep = Math.min(this.filled, this.capacity - piece.length);
    this.items.copyWithin(0, this.filled - keep, this.filled);
    this.items.set(piece, keep);
    this.filled = keep + piece.length;
    this.total += chunk.length;
  }

  /** The items held, oldest first (a copy), and the stream position of the first. */
  window(): { items: Uint32Array; position: number } {
    return { items: this.items.slice(0, this.filled), position: this.total - this.filled };
  }
}

export function startAudioStream(options: AudioStreamOptions): AudioStream {
  const input = options.inputFormat ? ['-f', options.inputFormat] : [];
  const ffmpeg = spawn(
    options.tools.ffmpeg,
    ['-v', 'error', '-nostdin', ...(options.realTime === false ? [] : ['-re']), ...input, '-i', 'pipe:0', '-vn', ...PCM_ARGS, 'pipe:1'],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const fpcalc = spawn(options.tools.fpcalc, [...FPCALC_PCM_ARGS, '-chunk', '2', '-overlap', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const ring = new ItemRing(options.windowItems);
  const parser = new ChunkParser();
  let dropped = 0;
  let ended = false;
  let lastError = '';
  let decoderDone = false;
  let heard = false;
  let endReason = 'the stream ended';
  /** fpcalc's exit code when it ended at the end of its input before ffmpeg's own end was seen. */
  let fpcalcEndedFirst: number | null = null;
  const endedWell = () => finish(heard ? endReason : 'the stream ended without audio in it (not an audio stream?)');
  const finish = (reason: string) => {
    if (ended) return;
    ended = true;
    kill(ffmpeg);
    kill(fpcalc);
    options.onEnd(reason);
  };
  const remember = (chunk: Buffer) => {
    const text = chunk.toString('utf8').trim();
    if (text !== '') lastError = text.split('\n').at(-1)?.slice(0, 300) ?? lastError;
  };
  ffmpeg.stderr?.on('data', remember);
  fpcalc.stderr?.on('data', remember);
  ffmpeg.stdin?.on('error', () => undefined);
  fpcalc.stdin?.on('error', () => undefined);
  if (ffmpeg.stdout && fpcalc.stdin) ffmpeg.stdout.pipe(fpcalc.stdin);
  const pcmRing = options.pcmSamples ? new PcmRing(options.pcmSamples) : null;
  if (pcmRing) ffmpeg.stdout?.on('data', (bytes: Buffer) => pcmRing.push(bytes));
  const readPcm = pcmRing ? () => pcmRing.window() : undefined;
  fpcalc.stdout?.setEncoding('utf8');
  fpcalc.stdout?.on('data', (text: string) => {
    for (const chunk of parser.push(text)) {
      heard = true;
      ring.push(chunk);
      const { items, position } = ring.window();
      options.onWindow(items, position, readPcm);
    }
  });
  for (const [name, child] of [
    ['ffmpeg', ffmpeg],
    ['fpcalc', fpcalc],
  ] as const) {
    child.once('error', (error: NodeJS.ErrnoException) => finish(error.code === 'ENOENT' ? `${name} is not installed` : `${name}: ${error.message}`));
    // ffmpeg ending well leaves fpcalc its last chunk: the stream ends when fpcalc does (fpcalc
    // 1.5 exits 1 at the end of its input, "Error decoding audio frame (End of file)"). The two
    // `close` events come in either order: fpcalc may be told first, once ffmpeg's output has
    // ended but before ffmpeg's own exit is seen; then ffmpeg's exit code decides.
    child.once('close', (code) => {
      if (child === ffmpeg && code === 0) {
        decoderDone = true;
        if (fpcalcEndedFirst !== null) endedWell();
      } else if (child === fpcalc && decoderDone) endedWell();
      else if (child === fpcalc && ffmpeg.stdout?.readableEnded === true) fpcalcEndedFirst = code ?? -1;
      else finish(`${name} stopped (${lastError || `exit code ${code ?? 'none'}`})`);
    });
  }
  return {
    write(bytes) {
      const stdin = ffmpeg.stdin;
      if (ended || !stdin || stdin.writableLength > MAX_PENDING_BYTES) {
        dropped += bytes.length;
        return false;
      }
      stdin.write(bytes);
      return true;
    },
    end(reason) {
      if (reason !== undefined) endReason = reason;
      ffmpeg.stdin?.end();
    },
    close() {
      finish('closed');
    },
    get dropped() {
      return dropped;
    },
  };
}

function kill(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
