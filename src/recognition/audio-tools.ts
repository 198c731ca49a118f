import { spawn } from 'node:child_process';
import { LIBRARY_TAGS, type LibraryTags } from '../store/library';

// The outside programs recognition runs (docs/recognition.md "What it needs"): Debian's ffmpeg
// decodes to 11,025 Hz mono 16-bit PCM (sox when ffmpeg refuses a file: ffmpeg 5.1 refuses some
// valid Ogg files), fpcalc (libchromaprint-tools) fingerprints that PCM, ffprobe reads the tags.

/** The PCM everything is fingerprinted from: Chromaprint's own working rate. */
export const SAMPLE_RATE = 11_025;
export const PCM_ARGS = ['-f', 's16le', '-ac', '1', '-ar', String(SAMPLE_RATE)] as const;
/** fpcalc reading that PCM from stdin, the whole of it, raw items. */
export const FPCALC_PCM_ARGS = ['-format', 's16le', '-rate', String(SAMPLE_RATE), '-channels', '1', '-raw', '-length', '0'] as const;

/** The programs' names or paths (config `recognition.tools`). */
export interface AudioTools {
  ffmpeg: string;
  ffprobe: string;
  sox: string;
  fpcalc: string;
}

export const DEFAULT_TOOLS: AudioTools = { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe', sox: 'sox', fpcalc: 'fpcalc' };

/** The most PCM one library file may decode to: 3 hours (a longer file is refused, not read whole). */
const MAX_PCM_BYTES = 3 * 3600 * SAMPLE_RATE * 2;

export class DecodeError extends Error {}

interface RunResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs a program, its stdin from `input` (or nothing), collecting at most `maxBytes` of stdout. */
function run(command: string, args: readonly string[], input: Buffer | null, maxBytes: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let overflow = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        overflow = true;
        child.kill('SIGKILL');
        return;
      }
      chunks.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(new DecodeError(error.code === 'ENOENT' ? `${command} is not installed (docs/recognition.md "What it needs")` : error.message)),
    );
    child.once('close', (code) => {
      if (overflow) reject(new DecodeError(`${command}: more than ${maxBytes} bytes of output`));
      else resolve({ code, stdout: Buffer.concat(chunks), stderr });
    });
    if (input && child.stdin) {
      child.stdin.on('error', () => undefined);
      child.stdin.end(input);
    }
  });
}

function lastLine(text: string): string {
  return (
    text
      .trim()
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .at(-1) ?? 'no output'
  );
}

/** A file decoded to 11,025 Hz mono s16le: ffmpeg first, sox when ffmpeg fails or gives nothing. */
export async function decodeFile(tools: AudioTools, path: string): Promise<Buffer> {
  const ffmpeg = await run(tools.ffmpeg, ['-v', 'error', '-nostdin', '-i', path, '-vn', ...PCM_ARGS, 'pipe:1'], null, MAX_PCM_BYTES);
  if (ffmpeg.code === 0 && ffmpeg.stdout.length > 0) return ffmpeg.stdout;
  const sox = await run(
    tools.sox,
    ['-q', path, '-t', 'raw', '-e', 'signed-integer', '-b', '16', '-c', '1', '-r', String(SAMPLE_RATE), '-'],
    null,
    MAX_PCM_BYTES,
  ).catch(() => null);
  if (sox && sox.code === 0 && sox.stdout.length > 0) return sox.stdout;
  throw new DecodeError(`cannot decode: ${lastLine(ffmpeg.stderr)}`);
}

/** fpcalc's `FINGERPRINT=` line of -raw output as items. */
export function parseRawFingerprint(output: string): Uint32Array {
  const line = output.split('\n').find((candidate) => candidate.startsWith('FINGERPRINT='));
  if (line === undefined) return new Uint32Array(0);
  const text = line.slice('FINGERPRINT='.length).trim();
  if (text === '') return new Uint32Array(0);
  return Uint32Array.from(text.split(',').map((item) => Number(item) >>> 0));
}

/** The whole fingerprint of 11,025 Hz mono s16le PCM (`fpcalc -raw -length 0` on stdin). */
export async function fingerprintPcm(tools: AudioTools, pcm: Buffer): Promise<Uint32Array> {
  const result = await run(tools.fpcalc, [...FPCALC_PCM_ARGS, '-'], pcm, 64 * 1024 * 1024);
  const items = parseRawFingerprint(result.stdout.toString('utf8'));
  if (items.length === 0) throw new DecodeError(`fpcalc gave no fingerprint: ${lastLine(result.stderr)}`);
  return items;
}

/**
 * The compressed fingerprint AcoustID's lookup takes, of 11,025 Hz mono s16le PCM: fpcalc without
 * `-raw` prints it as `FINGERPRINT=` (and the audio's length as `DURATION=`).
 */
export async function compressedFingerprint(tools: AudioTools, pcm: Buffer): Promise<{ fingerprint: string; duration: number }> {
  const args = FPCALC_PCM_ARGS.filter((arg) => arg !== '-raw');
  const result = await run(tools.fpcalc, [...args, '-'], pcm, 1024 * 1024);
  const lines = result.stdout.toString('utf8').split('\n');
  const value = (name: string) =>
    lines
      .find((line) => line.startsWith(`${name}=`))
      ?.slice(name.length + 1)
      .trim() ?? '';
  const fingerprint = value('FINGERPRINT');
  if (fingerprint === '') throw new DecodeError(`fpcalc gave no fingerprint: ${lastLine(result.stderr)}`);
  const duration = Math.round(Number(value('DURATION')) || pcm.length / 2 / SAMPLE_RATE);
  return { fingerprint, duration };
}

/** Tag names as files spell them (ID3 frames through ffmpeg, Vorbis comments, MP4 atoms), to svc's. */
const TAG_NAMES: Readonly<Record<string, (typeof LIBRARY_TAGS)[number]>> = {
  artist: 'artist',
  title: 'title',
  album: 'album',
  isrc: 'isrc',
  tsrc: 'isrc',
  label: 'label',
  publisher: 'label',
  organization: 'label',
  musicbrainz_trackid: 'musicbrainzrecordingid',
  'musicbrainz track id': 'musicbrainzrecordingid',
  musicbrainz_artistid: 'musicbrainzartistid',
  'musicbrainz artist id': 'musicbrainzartistid',
  musicbrainz_albumid: 'musicbrainzalbumid',
  'musicbrainz album id': 'musicbrainzalbumid',
};

/**
 * One value of a tag that holds several (ffprobe joins repeated Vorbis comments with ';'): the one
 * the file is named after if there is one (Debian's hyperrogue-music tags each file with every
 * title of the album), else the first.
 */
export function oneValue(value: string, fileName: string): string {
  const values = value
    .split(';')
    .map((part) => part.trim())
    .filter(Boolean);
  if (values.length < 2) return value.trim();
  const squash = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
  const words = fileName
    .replace(/\.[^.]*$/, '')
    .split(/[^\p{L}\p{N}']+/u)
    .map(squash)
    .filter((word) => word.length >= 3);
  const named =
    values.find((candidate) => words.includes(squash(candidate))) ??
    values.find((candidate) => words.some((word) => word.length >= 4 && squash(candidate).includes(word)));
  return named ?? values[0] ?? value.trim();
}

/** ffprobe's JSON (`-show_entries format_tags:stream_tags`) as the kept tags; the container's win. */
export function tagsFromProbe(json: string, fileName = ''): LibraryTags {
  const tags: LibraryTags = {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return tags;
  }
  const root = (parsed ?? {}) as { format?: { tags?: Record<string, unknown> }; streams?: { tags?: Record<string, unknown> }[] };
  const sources = [root.format?.tags, ...(root.streams ?? []).map((stream) => stream.tags)];
  for (const source of sources) {
    for (const [name, value] of Object.entries(source ?? {})) {
      const tag = TAG_NAMES[name.toLowerCase()];
      if (tag === undefined || typeof value !== 'string' || tags[tag] !== undefined) continue;
      const text = oneValue(value.replace(/\p{Cc}/gu, ' '), fileName).slice(0, 512);
      if (text !== '') tags[tag] = text;
    }
  }
  return tags;
}

export async function readTags(tools: AudioTools, path: string): Promise<LibraryTags> {
  const result = await run(tools.ffprobe, ['-v', 'error', '-show_entries', 'format_tags:stream_tags', '-of', 'json', path], null, 1024 * 1024).catch(
    () => null,
  );
  return result && result.code === 0 ? tagsFromProbe(result.stdout.toString('utf8'), path.split('/').at(-1) ?? '') : {};
}
