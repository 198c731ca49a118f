import fs from 'node:fs';
import path from 'node:path';
import { compressedFingerprint, decodeFile, DEFAULT_TOOLS, fingerprintPcm, SAMPLE_RATE } from '../../../src/recognition/audio-tools';
import { acoustIdFingerprint, compareFingerprints, decompressFingerprint } from '../../fakes/chromaprint';
import { gateOnPeers } from '../../helpers/peers';
import { makeSong } from '../../helpers/recognition-audio';
import { makeTempDir } from '../../helpers/temp-dir';

// The AcoustID fake's reading of Chromaprint's compressed fingerprints and its score
// (test/fakes/chromaprint.ts): fpcalc's compressed output decodes to exactly the items
// `fpcalc -raw` prints for the same audio; what chromaprint cannot decode is refused; the score
// of a stretch of a track against the track is high, against another track low.

const HANG_GUARD_MS = 60_000;
/** acoustid-server's acoustid/const.py TRACK_MAX_OFFSET. */
const MAX_OFFSET = 80;
const real = gateOnPeers(['sox', 'oggenc', 'vorbiscomment', 'ffmpeg', 'fpcalc'], "the AcoustID fake's fingerprint decoder");
const temp = makeTempDir('svc-chromaprint-');
let song: Buffer;
let other: Buffer;

real.beforeAll(() => {
  fs.mkdirSync(path.join(temp.dir, 'songs'));
  return Promise.all([
    decodeFile(DEFAULT_TOOLS, makeSong(path.join(temp.dir, 'songs'), 'one', 51, 30)),
    decodeFile(DEFAULT_TOOLS, makeSong(path.join(temp.dir, 'songs'), 'two', 52, 30)),
  ]).then(([a, b]) => {
    song = a;
    other = b;
  });
}, HANG_GUARD_MS);

real.afterAll(() => temp.cleanup());

const seconds = (pcm: Buffer, from: number, to: number) => pcm.subarray(from * SAMPLE_RATE * 2, to * SAMPLE_RATE * 2);

real.test(
  "fpcalc's compressed fingerprint decodes to the raw items of the same audio",
  async () => {
    for (const pcm of [song, seconds(song, 3, 20), other]) {
      const [raw, compressed] = await Promise.all([fingerprintPcm(DEFAULT_TOOLS, pcm), compressedFingerprint(DEFAULT_TOOLS, pcm)]);
      const decoded = decompressFingerprint(compressed.fingerprint);
      expect(decoded?.algorithm).toBe(1);
      expect(Array.from(decoded?.items ?? [])).toEqual(Array.from(raw));
      expect(acoustIdFingerprint(compressed.fingerprint)).toEqual(raw);
    }
  },
  HANG_GUARD_MS,
);

real.test(
  'what chromaprint cannot decode, or AcoustID does not take, is refused',
  async () => {
    const { fingerprint } = await compressedFingerprint(DEFAULT_TOOLS, song);
    expect(decompressFingerprint('')).toBeNull();
    expect(decompressFingerprint('AQA')).toBeNull();
    // Cut short: the item count promises more than the bytes hold.
    expect(decompressFingerprint(fingerprint.slice(0, fingerprint.length / 2))).toBeNull();
    // Another algorithm (byte 0) decodes but is not AcoustID's; no items is not a fingerprint.
    const bytes = Buffer.from(fingerprint, 'base64url');
    bytes[0] = 2;
    expect(decompressFingerprint(bytes.toString('base64url'))?.algorithm).toBe(2);
    expect(acoustIdFingerprint(bytes.toString('base64url'))).toBeNull();
    expect(acoustIdFingerprint(Buffer.from([1, 0, 0, 0]).toString('base64url'))).toBeNull();
  },
  HANG_GUARD_MS,
);

real.test(
  'the score: a stretch of the track against it high, another track low',
  async () => {
    const [track, stretch, elsewhere] = await Promise.all([
      fingerprintPcm(DEFAULT_TOOLS, song),
      fingerprintPcm(DEFAULT_TOOLS, seconds(song, 3, 27)),
      fingerprintPcm(DEFAULT_TOOLS, seconds(other, 3, 27)),
    ]);
    expect(compareFingerprints(track, track, MAX_OFFSET)).toBe(1);
    expect(compareFingerprints(track, stretch, MAX_OFFSET)).toBeGreaterThan(0.8);
    expect(compareFingerprints(track, elsewhere, MAX_OFFSET)).toBeLessThan(0.4);
  },
  HANG_GUARD_MS,
);
