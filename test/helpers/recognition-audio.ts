import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Tracks for the recognition tests, made with sox, no download (docs/recognition.md "Tests"):
// a seeded melody of plucked notes over a pink-noise bed, so every seed is another "song"; and
// the copies a stream makes of it: an excerpt, re-encoded at a low bit rate with noise added,
// sped up or slowed down as a turntable off pitch.

const PITCHES = [220, 247, 277, 294, 330, 370, 415, 440, 494, 554, 587, 659];
const LENGTHS = [0.2, 0.3, 0.45];

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

let noteBank: string | undefined;

/** The note bank of this process: one WAV per pitch and length, made once, outside any music folder. */
function notes(): string[][] {
  if (noteBank === undefined) {
    const bankDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-notes-'));
    process.once('exit', () => fs.rmSync(bankDir, { recursive: true, force: true }));
    noteBank = bankDir;
  }
  const bank = noteBank;
  return PITCHES.map((pitch) =>
    LENGTHS.map((length) => {
      const file = path.join(bank, `${pitch}-${length}.wav`);
      if (!fs.existsSync(file))
        execFileSync('sox', [
          '-n',
          '-r',
          '22050',
          '-c',
          '1',
          '-b',
          '16',
          file,
          'synth',
          String(length),
          'pluck',
          String(pitch),
          'fade',
          '0',
          String(length),
          '0.05',
        ]);
      return file;
    }),
  );
}

/** A tagged Ogg Vorbis "song" of about `seconds`: seed `seed`'s melody over pink noise. */
export function makeSong(
  dir: string,
  name: string,
  seed: number,
  seconds = 24,
  tags: { artist: string; title: string } = { artist: 'Synth', title: name },
): string {
  const bank = notes();
  const next = random(seed);
  const sequence: string[] = [];
  for (let total = 0; total < seconds;) {
    const lengthIndex = Math.floor(next() * LENGTHS.length);
    sequence.push(bank[Math.floor(next() * PITCHES.length)]?.[lengthIndex] ?? '');
    total += LENGTHS[lengthIndex] ?? 0.3;
  }
  const melody = path.join(dir, `${name}-melody.wav`);
  const noise = path.join(dir, `${name}-noise.wav`);
  const wav = path.join(dir, `${name}.wav`);
  execFileSync('sox', [...sequence, melody]);
  execFileSync('sox', ['-R', '-n', '-r', '22050', '-c', '1', '-b', '16', noise, 'synth', String(seconds), 'pinknoise', 'vol', '0.08']);
  execFileSync('sox', ['-m', melody, noise, '-b', '16', wav, 'trim', '0', String(seconds)]);
  const ogg = path.join(dir, `${name}.ogg`);
  execFileSync('sox', [wav, '-C', '3', ogg]);
  execFileSync('vorbiscomment', ['-w', '-t', `ARTIST=${tags.artist}`, '-t', `TITLE=${tags.title}`, ogg]);
  for (const file of [melody, noise, wav]) fs.rmSync(file);
  return ogg;
}

/** An excerpt as a stream would carry it: `from`..`from + seconds`, MP3 at `kbps` with pink noise, `speed` off pitch. */
export function streamCopy(source: string, out: string, options: { from: number; seconds: number; kbps?: number; noise?: number; speed?: number }): string {
  const wav = `${out}.wav`;
  const effects = ['trim', String(options.from), String(options.seconds), ...(options.speed && options.speed !== 1 ? ['speed', String(options.speed)] : [])];
  execFileSync('sox', [source, '-r', '44100', '-c', '2', '-b', '16', wav, ...effects]);
  const mixed = `${out}-mixed.wav`;
  if (options.noise) {
    const noise = `${out}-noise.wav`;
    execFileSync('sox', [
      '-R',
      '-n',
      '-r',
      '44100',
      '-c',
      '2',
      '-b',
      '16',
      noise,
      'synth',
      String(options.seconds * 1.1),
      'pinknoise',
      'vol',
      String(options.noise),
    ]);
    execFileSync('sox', ['-m', wav, noise, mixed, 'trim', '0', String(options.seconds / (options.speed ?? 1))]);
    fs.rmSync(noise);
  } else fs.copyFileSync(wav, mixed);
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', mixed, '-b:a', `${options.kbps ?? 64}k`, out]);
  fs.rmSync(wav);
  fs.rmSync(mixed);
  return out;
}

/** A DJ set of the sources, `seconds` of each from `from`, crossfaded over `fade` s, as one WAV (44.1 kHz stereo). */
export function djSet(sources: readonly string[], out: string, options: { from: number; seconds: number; fade: number }): string {
  // Each part padded to where it starts, all mixed at full volume: the crossfades lie exactly there.
  const parts = sources.map((source, i) => {
    const part = `${out}-${i}.wav`;
    const fades = ['fade', 't', i === 0 ? '0' : String(options.fade), String(options.seconds), i === sources.length - 1 ? '0' : String(options.fade)];
    execFileSync('sox', [
      source,
      '-r',
      '44100',
      '-c',
      '2',
      '-b',
      '16',
      part,
      'trim',
      String(options.from),
      String(options.seconds),
      ...fades,
      'pad',
      String(i * (options.seconds - options.fade)),
    ]);
    return part;
  });
  execFileSync('sox', ['-m', ...parts.flatMap((part) => ['-v', '1', part]), out]);
  for (const part of parts) fs.rmSync(part);
  return out;
}
