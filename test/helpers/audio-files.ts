import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// Real Ogg files for the Icecast listener's tests, made with the Debian tools a DJ would have
// (sox, oggenc from vorbis-tools, opusenc from opus-tools, flac; .ci/run installs them).

export interface Tags {
  artist: string;
  title: string;
  album: string;
}

/** A short stereo tone as 16-bit WAV (the encoders refuse sox's default float WAV). */
export function makeTone(dir: string, name: string, frequency: number, seconds = 2): string {
  const file = path.join(dir, `${name}.wav`);
  execFileSync('sox', ['-n', '-r', '44100', '-c', '2', '-b', '16', '-e', 'signed-integer', file, 'synth', String(seconds), 'sine', String(frequency)]);
  return file;
}

/** Ogg Vorbis, tagged afterwards with vorbiscomment as a tagger would. */
export function encodeVorbis(wav: string, tags: Tags): string {
  const file = wav.replace(/\.wav$/, '.ogg');
  execFileSync('oggenc', ['-Q', '-o', file, wav]);
  execFileSync('vorbiscomment', [
    '-w',
    '-t',
    `ARTIST=${tags.artist}`,
    '-t',
    `TITLE=${tags.title}`,
    '-t',
    `ALBUM=${tags.album}`,
    '-t',
    'TRACKNUMBER=3/12',
    file,
  ]);
  return file;
}

export function encodeOpus(wav: string, tags: Tags): string {
  const file = wav.replace(/\.wav$/, '.opus');
  execFileSync('opusenc', ['--quiet', '--artist', tags.artist, '--title', tags.title, '--album', tags.album, wav, file]);
  return file;
}

/** FLAC in Ogg (`flac --ogg`): the comments are a VORBIS_COMMENT metadata block. */
export function encodeFlacOgg(wav: string, tags: Tags): string {
  const file = wav.replace(/\.wav$/, '.oga');
  execFileSync('flac', ['--silent', '--ogg', '-T', `ARTIST=${tags.artist}`, '-T', `TITLE=${tags.title}`, '-T', `ALBUM=${tags.album}`, '-o', file, wav]);
  return file;
}

/** Files one after another: a chained Ogg stream (RFC 3533 section 4). */
export function chain(...files: string[]): Buffer {
  return Buffer.concat(files.map((file) => fs.readFileSync(file)));
}
