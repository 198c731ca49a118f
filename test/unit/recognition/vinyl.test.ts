import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { DEFAULT_TOOLS, decodeFile, fingerprintPcm } from '../../../src/recognition/audio-tools';
import { DEFAULT_SEARCH, FingerprintIndex } from '../../../src/recognition/fingerprint-index';
import { DEFAULT_VINYL, HOP_SAMPLES, layCopies, PcmRing, RateCursor, resample, searchRates, vinylRates } from '../../../src/recognition/vinyl';
import { gateOnPeers } from '../../helpers/peers';
import { makeSong } from '../../helpers/recognition-audio';
import { makeTempDir } from '../../helpers/temp-dir';

// The vinyl search (src/recognition/vinyl.ts, docs/recognition.md "Vinyl"): the rates, the
// resampling, the cursor that bounds the rates per window, the copies laid for one fpcalc run;
// then, with the real fpcalc, a song played off pitch found at its rate and a song never added
// found at none.

describe('vinylRates', () => {
  test('±8 % in 0.5 % steps: 32 rates besides 1, nearest first, none past the bound', () => {
    const rates = vinylRates(DEFAULT_VINYL);
    expect(rates).toHaveLength(32);
    expect(rates.slice(0, 4)).toEqual([1.005, 0.995, 1.01, 0.99]);
    expect(rates.slice(-2)).toEqual([1.08, 0.92]);
    expect(rates).not.toContain(1);
    expect(Math.max(...rates.map((rate) => Math.abs(rate - 1)))).toBeCloseTo(0.08, 6);
  });

  test('no range, no rates', () => {
    expect(vinylRates({ maxPercent: 0, stepPercent: 0.5 })).toEqual([]);
  });
});

describe('resample', () => {
  const sine = (hz: number, samples: number) => Int16Array.from({ length: samples }, (_, i) => Math.round(10_000 * Math.sin((2 * Math.PI * hz * i) / 11_025)));
  const upCrossings = (pcm: Int16Array) => pcm.reduce((count, value, i) => count + (i > 0 && (pcm[i - 1] ?? 0) < 0 && value >= 0 ? 1 : 0), 0);

  test('a deck 8 % fast is undone: the copy is 8 % longer and its tone 8 % lower', () => {
    const fast = sine(432, 11_025);
    const undone = resample(fast, 1.08);
    expect(undone.length).toBe(Math.floor(11_025 * 1.08));
    // 432 Hz played 8 % fast was a 400 Hz record: 400 cycles a second again.
    expect(Math.abs(upCrossings(undone) / (undone.length / 11_025) - 400)).toBeLessThanOrEqual(2);
  });

  test('rate 1 gives the same samples', () => {
    const pcm = sine(300, 5000);
    expect(resample(pcm, 1)).toEqual(pcm);
  });
});

describe('RateCursor', () => {
  test('walks every rate over the windows, at most the cap each, and tries the rate found first', () => {
    const rates = vinylRates(DEFAULT_VINYL);
    const cursor = new RateCursor(rates);
    const seen = new Set<number>();
    for (let window = 0; window < 4; window++) {
      const picked = cursor.next(8);
      expect(picked).toHaveLength(8);
      for (const rate of picked) seen.add(rate);
    }
    expect(seen.size).toBe(32);
    cursor.settle(1.065);
    const next = cursor.next(8);
    expect(next[0]).toBe(1.065);
    expect(new Set(next).size).toBe(8);
    cursor.settle(null);
    expect(cursor.next(8)).not.toContain(undefined);
  });
});

describe('layCopies', () => {
  test('each copy starts on a hop, and its range holds only items wholly inside it', () => {
    const copies = [new Int16Array(50_000), new Int16Array(61_111), new Int16Array(44_100)];
    const { pcm, ranges } = layCopies(copies);
    let at = 0;
    ranges.forEach(([first, end], i) => {
      expect(first * HOP_SAMPLES).toBe(at);
      // The last item's frames (its own and the 19 after, each 4096 samples) end inside the copy; the next one's would not.
      expect((end - 1 + 19) * HOP_SAMPLES + 4096).toBeLessThanOrEqual(at + (copies[i]?.length ?? 0));
      expect((end + 19) * HOP_SAMPLES + 4096).toBeGreaterThan(at + (copies[i]?.length ?? 0));
      at += Math.ceil((copies[i]?.length ?? 0) / HOP_SAMPLES) * HOP_SAMPLES;
    });
    expect(pcm.length).toBe(at);
  });
});

describe('PcmRing', () => {
  test('keeps the last samples across odd-length pieces, with the position of the first in items', () => {
    const ring = new PcmRing(HOP_SAMPLES * 2);
    const samples = Int16Array.from({ length: HOP_SAMPLES * 5 }, (_, i) => (i % 30_000) - 15_000);
    const bytes = Buffer.from(samples.buffer);
    for (let at = 0; at < bytes.length; at += 777) ring.push(bytes.subarray(at, Math.min(bytes.length, at + 777)));
    const { pcm, position } = ring.window();
    expect(position).toBe(3);
    expect(pcm).toEqual(samples.slice(HOP_SAMPLES * 3));
  });
});

const real = gateOnPeers(['sox', 'vorbiscomment', 'ffmpeg', 'fpcalc'], 'the vinyl search with the real fpcalc');

real.describe('searchRates with the real fpcalc', () => {
  const temp = makeTempDir('svc-vinyl-');
  afterAll(() => temp.cleanup());
  const fingerprint = (pcm: Buffer) => fingerprintPcm(DEFAULT_TOOLS, pcm);

  test('a song played 6 % fast is found near rate 1.06 at the right place; a song never added is found at no rate', async () => {
    const library = [31, 32, 33].map((seed, i) => makeSong(temp.dir, `lib-${i}`, seed, 30));
    const stranger = makeSong(temp.dir, 'stranger', 77, 30);
    const tracks = [];
    for (const [i, file] of library.entries()) tracks.push({ id: i + 1, fingerprint: await fingerprint(await decodeFile(DEFAULT_TOOLS, file)) });
    const index = new FingerprintIndex(tracks);
    const search = (items: Uint32Array) => index.search(items, DEFAULT_SEARCH);
    const offPitch = async (file: string) => {
      const out = path.join(temp.dir, `${path.basename(file)}-fast.wav`);
      execFileSync('sox', [file, out, 'trim', '8', '14', 'speed', '1.06']);
      const pcm = await decodeFile(DEFAULT_TOOLS, out);
      return new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2).slice(0, Math.round(10.5 * 11_025));
    };
    const rates = vinylRates(DEFAULT_VINYL);
    const fast = await offPitch(library[1] ?? '');
    expect(search((await fingerprint(Buffer.from(fast.buffer))).subarray(0))).toBeNull();
    const found = await searchRates(fast, rates, fingerprint, search);
    expect(found?.match.trackId).toBe(2);
    expect(Math.abs((found?.rate ?? 0) - 1.06)).toBeLessThanOrEqual(0.01);
    // 8 s into the song, in items (8 a second), within a frame or two.
    expect(Math.abs((found?.match.offset ?? 0) - (8 * 11_025) / HOP_SAMPLES)).toBeLessThanOrEqual(3);
    expect(await searchRates(await offPitch(stranger), rates, fingerprint, search)).toBeNull();
  }, 60_000);

  test('a fingerprinter that fails is a miss, not a failure', async () => {
    const index = new FingerprintIndex([{ id: 1, fingerprint: Uint32Array.from([1, 2, 3]) }]);
    const failing = () => Promise.reject(new Error('fpcalc is not installed'));
    await expect(searchRates(new Int16Array(200_000), [1.01], failing, (items) => index.search(items))).resolves.toBeNull();
  });
});
