'use strict';
// Bench: complete first frames (docs/decisions.md "Complete frames"). svc already holds an
// album's cover; each submission is another track of that album, sent without a cover. The time
// from sending the POST to each /wsstream reader's first frame of that track, which must carry
// the stored cover (not the transparent placeholder): p99 over every reader and submission,
// goal <= 50 ms (the same as the bare title's). Enrichment off: the cover comes from the store.
//
//   npm run build && node bench/complete-frames.bench.js
//
// Loopback only; bounded (killed at 120 s); diagnostics on stderr, one JSON line per row on stdout.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { performance } = require('node:perf_hooks');
const WebSocket = require('ws');

const ROOT = path.resolve(__dirname, '..');
const READERS = 20;
const SUBMISSIONS = Number(process.env.BENCH_COMPLETE_SUBMISSIONS || 20);
const TIME_LIMIT_MS = 120_000;
const GOAL_MS = 50;
const ROW = 'complete frames: POST to the first /wsstream frame carrying an already-stored cover, 20 readers, p99';

const log = (message) => process.stderr.write(`[complete-frames] ${message}\n`);

/** A 64x64 PNG (one colour), enough to tell a cover from the 1x1 placeholder. */
function png() {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([length, body, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(64, 0);
  header.writeUInt32BE(64, 4);
  header[8] = 8;
  header[9] = 2;
  const rows = Buffer.concat(Array.from({ length: 64 }, () => Buffer.concat([Buffer.from([0]), Buffer.alloc(64 * 3, 0x7f)])));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function startCoverHost(bytes) {
  const server = http.createServer((req, res) => res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': bytes.length }).end(bytes));
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() })),
  );
}

async function startServe() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-complete-'));
  const config = path.join(dir, 'svc.json');
  fs.writeFileSync(config, JSON.stringify({ enrichment: { enabled: false }, coverFetch: { allowPrivateAddresses: true } }));
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin', 'svc.js'), 'serve', '--port', '0', '--host', '127.0.0.1', '--db', path.join(dir, 'svc.db'), '--config', config],
    {
      cwd: dir,
      env: { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SVC_'))), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('svc did not start')), 15_000);
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`svc exited with ${code}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => {
          fs.rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

function post(url, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v1/remoteinput`, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function connectReaders(url) {
  return Promise.all(
    Array.from(
      { length: READERS },
      () =>
        new Promise((resolve, reject) => {
          const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/wsstream?session_id=bench`);
          const reader = { socket, listeners: new Set() };
          socket.on('message', (data) => {
            const at = performance.now();
            const frame = JSON.parse(data.toString());
            for (const listener of reader.listeners) listener(frame, at);
          });
          socket.once('open', () => resolve(reader));
          socket.once('error', reject);
        }),
    ),
  );
}

/** One submission: per reader, ms from the POST to its first frame of the track; counts the first frames without the cover. */
async function submitAndWatch(url, readers, title, coverBase64) {
  const times = [];
  let bare = 0;
  const done = readers.map(
    (reader) =>
      new Promise((resolve) => {
        const listener = (frame, at) => {
          if (frame.title !== title) return;
          reader.listeners.delete(listener);
          times.push(at - sentAt);
          if (frame.coverimagebase64 !== coverBase64) bare += 1;
          resolve();
        };
        reader.listeners.add(listener);
      }),
  );
  const sentAt = performance.now();
  await post(url, { artist: 'Bench Artist', title, album: 'Bench Album' });
  await Promise.race([Promise.all(done), new Promise((resolve) => setTimeout(resolve, 10_000))]);
  return { times, bare };
}

function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  const timer = setTimeout(() => {
    log('time limit reached');
    process.exit(1);
  }, TIME_LIMIT_MS);
  timer.unref();
  const cover = png();
  const host = await startCoverHost(cover);
  const svc = await startServe();
  const times = [];
  let bare = 0;
  try {
    const first = await post(svc.url, { artist: 'Bench Artist', title: 'Stored', album: 'Bench Album', coverurl: `${host.url}/cover.png` });
    if (first.status !== 200 || !JSON.parse(first.body).processed_metadata.coverurl) throw new Error(`the cover was not stored: ${first.body}`);
    const readers = await connectReaders(svc.url);
    try {
      await submitAndWatch(svc.url, readers, 'Warm-up', cover.toString('base64'));
      for (let index = 0; index < SUBMISSIONS; index += 1) {
        const result = await submitAndWatch(svc.url, readers, `Track ${index}`, cover.toString('base64'));
        times.push(...result.times);
        bare += result.bare;
      }
    } finally {
      for (const reader of readers) reader.socket.terminate();
    }
  } finally {
    await svc.stop();
    host.close();
  }
  const p99 = percentile(times, 99);
  log(`${times.length} first frames, ${bare} without the stored cover; p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`);
  const row = { row: ROW, unit: 'ms', svc: { median: p99, min: p99, max: p99 }, baseline: null, ratio: null, goal: `< ${GOAL_MS} ms`, met: p99 <= GOAL_MS };
  if (bare > 0) row.error = `${bare} first frame(s) came without the stored cover`;
  process.stdout.write(JSON.stringify(row) + '\n');
}

main().catch((error) => {
  log(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
