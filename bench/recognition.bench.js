'use strict';
// Recognition (docs/recognition.md), on Debian's hyperrogue-music: 14 of its 17 tracks in the
// library, 3 held out. One DJ set of every track (36 s of each from 10 s in, 6 s crossfades, the
// held-out ones among them) is streamed through the same path svc takes (ffmpeg to 11,025 Hz
// mono, fpcalc -chunk 2 -overlap, a window of the last 8 s matched after every chunk, the title
// tracker), under conditions: MP3 128 kbit/s; MP3 64 kbit/s with pink noise; sped up and slowed
// down by 2 % and 8 % (a turntable off pitch), each without and with the vinyl search (a miss
// searched again at other rates, src/recognition/vinyl.ts, as a `vinyl: true` stream is). Rows per condition: the share of library tracks
// titled while they play; the delay from the change (the crossfade's middle) to the title,
// median and p95; the seconds a wrong title was shown (the previous track's title lingering up
// to 15 s after a change is late, not wrong). Then: the CPU of the decoder and fingerprinter per
// stream (share of one core while the audio plays; with the vinyl search, the fpcalc runs and the
// resampling added), and for 1,000 and 10,000 synthetic tracks
// (4 minutes of random items each) the index's memory and the time of one search.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { emitRow, emitFailure, log } = require('./lib/report');

const ROOT = path.resolve(__dirname, '..');
const { DEFAULT_TOOLS, decodeFile, fingerprintPcm } = require(path.join(ROOT, 'dist/recognition/audio-tools'));
const { FingerprintIndex, DEFAULT_SEARCH } = require(path.join(ROOT, 'dist/recognition/fingerprint-index'));
const { TitleTracker, DEFAULT_TRACKER } = require(path.join(ROOT, 'dist/recognition/title-tracker'));
const { ITEMS_PER_SECOND } = require(path.join(ROOT, 'dist/recognition/recognition'));
const { DEFAULT_VINYL, HOP_SAMPLES, ITEM_SPAN_FRAMES, RateCursor, searchRates, vinylRates } = require(path.join(ROOT, 'dist/recognition/vinyl'));

const MUSIC = '/usr/share/hyperrogue/music';
const SEGMENT = 36;
const FADE = 6;
const FROM = 10;
const WINDOW = Math.round(8 * ITEMS_PER_SECOND);
const CHUNK_ITEMS = 16;
const LATE_GRACE = 15;

function sh(command, args, options = {}) {
  return execFileSync(command, args, { maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'], ...options });
}

/** The set as one WAV, and where each track's turn begins (its crossfade's middle), in seconds of the set. */
function buildSet(dir, files, speed) {
  // Each part is padded to where it starts and all are mixed at full volume: the crossfades lie exactly where they should.
  const parts = files.map((file, i) => {
    const part = path.join(dir, `part-${i}.wav`);
    const fades = ['fade', 't', i === 0 ? '0' : String(FADE), String(SEGMENT), i === files.length - 1 ? '0' : String(FADE)];
    sh('sox', [file, '-r', '44100', '-c', '2', '-b', '16', part, 'trim', String(FROM), String(SEGMENT), ...fades, 'pad', String(i * (SEGMENT - FADE))]);
    return part;
  });
  const set = path.join(dir, 'set.wav');
  sh('sox', ['-m', ...parts.flatMap((part) => ['-v', '1', part]), set]);
  for (const part of parts) fs.rmSync(part);
  const changes = files.map((_, i) => (i === 0 ? 0 : i * (SEGMENT - FADE) + FADE / 2) / speed);
  if (speed === 1) return { set, changes };
  const sped = path.join(dir, 'set-speed.wav');
  sh('sox', [set, sped, 'speed', String(speed)]);
  return { set: sped, changes };
}

/** The set as the stream carries it, decoded and fingerprinted as svc listens (chunk mode), with the children's CPU seconds. */
function streamItems(dir, set, kbps, noise) {
  const mp3 = path.join(dir, 'set.mp3');
  let source = set;
  if (noise) {
    const seconds = Number(sh('soxi', ['-D', set]).toString().trim());
    const bed = path.join(dir, 'noise.wav');
    sh('sox', ['-R', '-n', '-r', '44100', '-c', '2', '-b', '16', bed, 'synth', String(seconds), 'pinknoise', 'vol', String(noise)]);
    source = path.join(dir, 'noisy.wav');
    sh('sox', ['-m', set, bed, source]);
  }
  sh('ffmpeg', ['-v', 'error', '-y', '-i', source, '-b:a', `${kbps}k`, mp3]);
  // The PCM svc's decoder makes of the stream, for the vinyl search's ring.
  const raw = sh('ffmpeg', ['-v', 'error', '-nostdin', '-i', mp3, '-vn', '-f', 's16le', '-ac', '1', '-ar', '11025', 'pipe:1']);
  const pcm = new Int16Array(raw.buffer, raw.byteOffset, Math.floor(raw.length / 2));
  const script = `ffmpeg -v error -nostdin -i pipe:0 -vn -f s16le -ac 1 -ar 11025 pipe:1 < "$1" | fpcalc -format s16le -rate 11025 -channels 1 -raw -length 0 -chunk 2 -overlap - 2>/dev/null; times`;
  const output = sh('bash', ['-c', script, 'bench', mp3]).toString();
  const items = [];
  for (const line of output.split('\n')) if (line.startsWith('FINGERPRINT=')) for (const item of line.slice(12).split(',')) if (item !== '') items.push(Number(item) >>> 0);
  // `times`: the shell's user and system time, then its children's.
  const times = output.trim().split('\n').slice(-1)[0].match(/(\d+)m([\d.]+)s/g) ?? [];
  const cpu = times.reduce((sum, t) => {
    const [, m, s] = /(\d+)m([\d.]+)s/.exec(t);
    return sum + Number(m) * 60 + Number(s);
  }, 0);
  return { items: Uint32Array.from(items), cpu, pcm };
}

/** CPU seconds of this process and of its waited-for children (/proc/self/stat utime, stime, cutime, cstime). */
function cpuSeconds() {
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return ticks / 100;
}

/**
 * Walks the stream as svc does: after every chunk, the last window is searched and the tracker
 * told. With `pcm` (the vinyl search), a miss is searched again at other rates as
 * src/recognition/recognition.ts does: the last window + 2.5 s of PCM, the rate cursor's next
 * `ratesPerWindow` rates in one fpcalc run.
 */
async function listen(index, items, pcm = null) {
  const tracker = new TitleTracker(DEFAULT_TRACKER);
  const cursor = new RateCursor(vinylRates(DEFAULT_VINYL));
  const pcmWindow = Math.round((WINDOW / ITEMS_PER_SECOND + 2.5) * 11025);
  const shown = []; // [seconds, trackId | null]
  const rates = [];
  let searchMs = 0;
  let searches = 0;
  for (let end = CHUNK_ITEMS; end <= items.length; end += CHUNK_ITEMS) {
    const from = Math.max(0, end - WINDOW);
    if (end - from < WINDOW / 2) continue;
    const started = process.hrtime.bigint();
    let match = index.search(items.subarray(from, end), DEFAULT_SEARCH);
    searchMs += Number(process.hrtime.bigint() - started) / 1e6;
    searches += 1;
    let position = from;
    let rate = 1;
    if (match) cursor.settle(null);
    else if (pcm) {
      // The PCM the items up to `end` were made of: item end-1 reaches 19 frames on.
      const last = Math.min(pcm.length, (end - 1 + ITEM_SPAN_FRAMES) * HOP_SAMPLES + 4096);
      const first = Math.max(0, last - pcmWindow);
      const found = await searchRates(pcm.subarray(first, last), cursor.next(DEFAULT_VINYL.ratesPerWindow), (bytes) => fingerprintPcm(DEFAULT_TOOLS, bytes), (query) => index.search(query, DEFAULT_SEARCH));
      cursor.settle(found ? found.rate : null);
      if (found) {
        ({ match, rate } = found);
        position = Math.round(first / HOP_SAMPLES);
        rates.push(rate);
      }
    }
    const event = tracker.push({ position, match, rate });
    const at = end / ITEMS_PER_SECOND;
    if (event?.type === 'title') shown.push([at, event.match.trackId]);
    if (event?.type === 'cleared') shown.push([at, null]);
  }
  return { shown, searchMs: searchMs / Math.max(searches, 1), rates };
}

function score(shown, truth, changes, totalSeconds) {
  const delays = [];
  let titled = 0;
  let library = 0;
  truth.forEach((id, i) => {
    if (id === null) return;
    library += 1;
    const start = changes[i];
    const end = changes[i + 1] ?? totalSeconds;
    const first = shown.find(([at, shownId]) => shownId === id && at >= start && at <= end + 2);
    if (first) {
      titled += 1;
      delays.push(first[0] - start);
    }
  });
  // Seconds of wrong title, in steps of 0.5 s.
  let wrong = 0;
  for (let t = 0; t < totalSeconds; t += 0.5) {
    const last = shown.filter(([at]) => at <= t).at(-1);
    const id = last ? last[1] : null;
    if (id === null) continue;
    const turn = Math.max(0, changes.filter((c) => c <= t).length - 1);
    const now = truth[turn];
    const previous = truth[turn - 1];
    const late = previous !== undefined && id === previous && t - changes[turn] <= LATE_GRACE;
    if (id !== now && !late) wrong += 0.5;
  }
  return { share: titled / library, delays, wrong };
}

function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function randomItems(seed, length) {
  let state = seed >>> 0;
  const items = new Uint32Array(length);
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    items[i] = state;
  }
  return items;
}

function sizeRows() {
  for (const tracks of [1000, 10000]) {
    const length = Math.round(240 * ITEMS_PER_SECOND);
    const library = Array.from({ length: tracks }, (_, i) => ({ id: i + 1, fingerprint: randomItems(i + 1, length) }));
    global.gc?.();
    const before = process.memoryUsage();
    const index = new FingerprintIndex(library);
    library.length = 0;
    global.gc?.();
    const after = process.memoryUsage();
    const held = after.arrayBuffers - before.arrayBuffers + index.bytes * 0;
    const times = [];
    for (let q = 0; q < 200; q++) {
      const source = randomItems(1 + (q % tracks), length);
      const window = source.subarray(500, 500 + WINDOW);
      const started = process.hrtime.bigint();
      const match = index.search(window, DEFAULT_SEARCH);
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (match?.trackId !== 1 + (q % tracks)) throw new Error(`search ${q} at ${tracks} tracks found ${match?.trackId}`);
    }
    const bytes = index.bytes;
    log(`index of ${tracks} tracks: ${(bytes / 2 ** 20).toFixed(1)} MiB of arrays (${(held / 2 ** 20).toFixed(1)} MiB array buffers grown); search median ${quantile(times, 0.5).toFixed(2)} ms`);
    emitRow({
      row: `index memory, ${tracks} tracks of 4 min`,
      unit: 'MiB',
      svc: [bytes / 2 ** 20],
      baseline: { label: 'the fingerprints alone (4 bytes per item)', values: [(tracks * length * 4) / 2 ** 20] },
      goal: tracks === 10000 ? '<= 200 MiB' : null,
    });
    emitRow({
      row: `match time of one 8 s window, ${tracks} tracks`,
      unit: 'ms',
      svc: times,
      baseline: { label: 'the same search in a 10-track index', values: tinyIndexTimes(length) },
      goal: tracks === 10000 ? '<= 50 ms' : null,
    });
  }
}

function tinyIndexTimes(length) {
  const library = Array.from({ length: 10 }, (_, i) => ({ id: i + 1, fingerprint: randomItems(i + 1, length) }));
  const index = new FingerprintIndex(library);
  const times = [];
  for (let q = 0; q < 200; q++) {
    const window = library[q % 10].fingerprint.subarray(500, 500 + WINDOW);
    const started = process.hrtime.bigint();
    index.search(window, DEFAULT_SEARCH);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return times;
}

async function qualityRows() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-recognition-'));
  try {
    const names = fs.readdirSync(MUSIC).filter((name) => name.endsWith('.ogg')).sort();
    const heldOut = new Set(['hr-domina-hunting.ogg', 'hr3-hell.ogg', 'hr-savino-ivory.ogg']);
    const library = [];
    for (const name of names.filter((n) => !heldOut.has(n))) {
      const pcm = await decodeFile(DEFAULT_TOOLS, path.join(MUSIC, name));
      library.push({ id: library.length + 1, name, fingerprint: await fingerprintPcm(DEFAULT_TOOLS, pcm) });
    }
    const index = new FingerprintIndex(library);
    const idOf = new Map(library.map((track) => [track.name, track.id]));
    const order = names.map((name, i) => names[(i * 7) % names.length]);
    const truth = order.map((name) => idOf.get(name) ?? null);
    const conditions = [
      { label: 'MP3 128 kbit/s', kbps: 128, speed: 1 },
      { label: 'MP3 64 kbit/s + noise', kbps: 64, noise: 0.06, speed: 1 },
      { label: 'pitch +2 %', kbps: 128, speed: 1.02 },
      { label: 'pitch -2 %', kbps: 128, speed: 0.98 },
      { label: 'pitch +8 %', kbps: 128, speed: 1.08 },
      { label: 'pitch -8 %', kbps: 128, speed: 0.92 },
      { label: 'vinyl search, MP3 128 kbit/s', kbps: 128, speed: 1, vinyl: true },
      { label: 'vinyl search, pitch +2 %', kbps: 128, speed: 1.02, vinyl: true },
      { label: 'vinyl search, pitch -2 %', kbps: 128, speed: 0.98, vinyl: true },
      { label: 'vinyl search, pitch +8 %', kbps: 128, speed: 1.08, vinyl: true },
      { label: 'vinyl search, pitch -8 %', kbps: 128, speed: 0.92, vinyl: true },
      { label: 'vinyl search, pitch +8 %, MP3 64 kbit/s + noise', kbps: 64, noise: 0.06, speed: 1.08, vinyl: true },
    ];
    let vinylCpu = null;
    let cpuShare = null;
    for (const condition of conditions) {
      const { set, changes } = buildSet(dir, order.map((name) => path.join(MUSIC, name)), condition.speed);
      const totalSeconds = Number(sh('soxi', ['-D', set]).toString().trim());
      const { items, cpu, pcm } = streamItems(dir, set, condition.kbps, condition.noise);
      const cpuBefore = cpuSeconds();
      const { shown, rates } = await listen(index, items, condition.vinyl ? pcm : null);
      const listenCpu = cpuSeconds() - cpuBefore;
      if (condition.vinyl && condition.speed === 1.08 && !condition.noise) vinylCpu = { cpu: cpu + listenCpu, totalSeconds };
      if (rates.length > 0) log(`${condition.label}: found at rates ${[...new Set(rates)].sort().join(' ')}`);
      const result = score(shown, truth, changes, totalSeconds);
      if (cpuShare === null) cpuShare = { cpu, totalSeconds };
      log(`${condition.label}: ${items.length} items over ${totalSeconds.toFixed(0)} s; titled ${(result.share * 100).toFixed(0)} %, delays ${result.delays.map((d) => d.toFixed(1)).join(' ')}, wrong ${result.wrong} s`);
      const titledGoal = condition.speed === 1 ? '>= 0.95' : condition.vinyl ? '>= 0.85' : null;
      emitRow({ row: `share of library tracks titled, ${condition.label}`, unit: '%', svc: [result.share * 100], baseline: { label: 'every library track in the set', values: [100] }, goal: titledGoal });
      if (result.delays.length > 0) {
        emitRow({ row: `delay change -> title, median, ${condition.label}`, unit: 's', svc: [quantile(result.delays, 0.5)], baseline: { label: 'the 10 s goal', values: [10] }, goal: condition.speed === 1 ? '<= 1' : null });
        emitRow({ row: `delay change -> title, p95, ${condition.label}`, unit: 's', svc: [quantile(result.delays, 0.95)], baseline: { label: 'the 15 s goal', values: [15] }, goal: condition.speed === 1 ? '<= 1' : null });
      }
      emitRow({ row: `seconds of wrong title, ${condition.label}`, unit: 's', svc: [result.wrong], baseline: { label: 'the set length', values: [totalSeconds] }, goal: '<= 0 s' });
    }
    // The decoder and fingerprinter's CPU while the audio plays (ffmpeg's -re adds no work).
    emitRow({
      row: 'CPU of ffmpeg + fpcalc per stream, share of one core',
      unit: '%',
      svc: [(cpuShare.cpu / cpuShare.totalSeconds) * 100],
      baseline: { label: 'the 5 % goal', values: [5] },
      goal: '<= 5 percent',
      details: { cpuSecondsPerStreamHour: (cpuShare.cpu / cpuShare.totalSeconds) * 3600 },
    });
    // A vinyl stream 8 % off: every window misses at rate 1, so every one is searched at 8 rates.
    emitRow({
      row: 'CPU per vinyl stream 8 % off pitch (decoder, fingerprinter, rate search), share of one core',
      unit: '%',
      svc: [(vinylCpu.cpu / vinylCpu.totalSeconds) * 100],
      baseline: { label: 'the 5 % goal', values: [5] },
      goal: '<= 5 percent',
      details: { cpuSecondsPerStreamHour: (vinylCpu.cpu / vinylCpu.totalSeconds) * 3600 },
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  if (!fs.existsSync(MUSIC)) {
    emitFailure('recognition', `${MUSIC} is missing (Debian package hyperrogue-music)`);
    return;
  }
  try {
    await qualityRows();
  } catch (error) {
    emitFailure('recognition quality', error);
  }
  try {
    sizeRows();
  } catch (error) {
    emitFailure('recognition index size', error);
  }
}

main().catch((error) => {
  emitFailure('recognition', error);
  process.exitCode = 1;
});
