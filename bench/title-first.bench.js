'use strict';
// Bench: title first, details after (docs/title-first.md). 100 /v1/images/ws push clients; a
// local MusicBrainz stand-in that answers every request 400 ms late (its answers are the test
// fixtures of test/fixtures/musicbrainz, the recording titled as asked). Per submission: the time
// from sending the POST to each client's first frame of that track (p99 over every client and
// submission; goal <= 50 ms), and to the frame carrying the enrichment (p50 and p99).
//
//   npm run build && node bench/title-first.bench.js
//   BENCH_BEFORE_ROOT=/path/to/a/built/checkout node bench/title-first.bench.js
//
// With BENCH_BEFORE_ROOT (a checkout of the code before title-first, with dist/ built and
// node_modules), the same numbers are measured on it in the same run and shown as the baseline.
// Loopback only; bounded (killed at 240 s); diagnostics on stderr, one JSON line per row on stdout.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const WebSocket = require('ws');

const ROOT = path.resolve(__dirname, '..');
const CLIENTS = 100;
const SUBMISSIONS = Number(process.env.BENCH_TITLE_SUBMISSIONS || 8);
const LATENCY_MS = 400;
const TIME_LIMIT_MS = 240_000;
const FIRST_FRAME_GOAL_MS = 50;
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'musicbrainz');
const ROWS = {
  first: 'title-first: POST to first frame of the track, 100 /v1/images/ws clients, services at 400 ms, p99',
  enrichedP50: 'title-first: POST to the enriched frame, p50',
  enrichedP99: 'title-first: POST to the enriched frame, p99',
};

const log = (message) => process.stderr.write(`[title-first] ${message}\n`);
const fixture = (name) => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8'));

/** The MusicBrainz stand-in: every answer LATENCY_MS late; a search answers with the asked title. */
function startSlowMusicBrainz() {
  const search = fixture('search-teardrop');
  const byPath = new Map([
    ['recording', fixture('recording-teardrop')],
    ['release', fixture('release-mezzanine')],
    ['artist', fixture('artist-massive-attack')],
  ]);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://stand-in.invalid');
    const [, , , entity, id] = url.pathname.split('/');
    let body;
    if (entity === 'recording' && !id) {
      const asked = /recording:"([^"]*)"/.exec(url.searchParams.get('query') || '');
      const title = asked ? asked[1].replace(/\\(.)/g, '$1') : 'Teardrop';
      body = { ...search, recordings: search.recordings.map((recording) => ({ ...recording, title })) };
    } else {
      body = byPath.get(entity);
    }
    setTimeout(() => {
      res.writeHead(body ? 200 : 404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body || { error: 'Not Found' }));
    }, LATENCY_MS);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() })),
  );
}

/** `svc serve` of a checkout (its bin/svc.js and dist/), enrichment from MusicBrainz only. */
async function startServe(root, musicbrainzUrl) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-title-'));
  const config = path.join(dir, 'svc.json');
  const off = { enabled: false };
  fs.writeFileSync(
    config,
    JSON.stringify({
      enrichment: {
        contact: 'https://example.org/svc-bench',
        musicbrainz: { enabled: true, baseUrl: `${musicbrainzUrl}/ws/2` },
        coverartarchive: off,
        wikidata: off,
        wikipedia: off,
        theaudiodb: off,
      },
    }),
  );
  const child = spawn(
    process.execPath,
    [path.join(root, 'bin', 'svc.js'), 'serve', '--port', '0', '--host', '127.0.0.1', '--db', path.join(dir, 'svc.db'), '--config', config],
    {
      cwd: dir,
      env: { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SVC_'))), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`svc of ${root} did not start`)), 15_000);
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`svc of ${root} exited with ${code}`)));
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

function connectClients(url) {
  return Promise.all(
    Array.from(
      { length: CLIENTS },
      () =>
        new Promise((resolve, reject) => {
          const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/images/ws`);
          const client = { socket, listeners: new Set() };
          socket.on('message', (data) => {
            const frame = JSON.parse(data.toString());
            const at = performance.now();
            for (const listener of client.listeners) listener(frame, at);
          });
          socket.once('open', () => {
            socket.send(JSON.stringify({ type: 'subscribe' }));
            resolve(client);
          });
          socket.once('error', reject);
        }),
    ),
  );
}

function post(url, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v1/remoteinput`, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve(JSON.parse(text)));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** One submission: per client, when the track's first frame and its enriched frame arrived (ms after the POST). */
async function submitAndWatch(url, clients, title, frameLog) {
  const firsts = [];
  const enriched = [];
  const done = clients.map(
    (client, index) =>
      new Promise((resolve) => {
        let seenFirst = false;
        const listener = (frame, at) => {
          if (frame.type !== 'track' || frame.title !== title) return;
          if (index === 0 && frameLog)
            frameLog.push({ ms: Math.round((at - sentAt) * 10) / 10, fields: Object.keys(frame.track).filter((key) => key !== 'dbid') });
          if (!seenFirst) {
            seenFirst = true;
            firsts.push(at - sentAt);
          }
          if (frame.track.musicbrainzrecordingid) {
            enriched.push(at - sentAt);
            client.listeners.delete(listener);
            resolve();
          }
        };
        client.listeners.add(listener);
      }),
  );
  const sentAt = performance.now();
  const answer = await post(url, { artist: 'Massive Attack', title });
  if (frameLog) frameLog.push({ ms: Math.round((performance.now() - sentAt) * 10) / 10, post: `200, dbid ${answer.dbid}` });
  await Promise.race([Promise.all(done), new Promise((resolve) => setTimeout(resolve, 20_000))]);
  return { firsts, enriched };
}

function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function measure(root, label) {
  const musicbrainz = await startSlowMusicBrainz();
  const svc = await startServe(root, musicbrainz.url);
  const clients = await connectClients(svc.url);
  const firsts = [];
  const enriched = [];
  const frameLog = [];
  try {
    // Not counted: the first submission of a process pays for its cold start (JIT, first queries).
    await submitAndWatch(svc.url, clients, `Warm-up ${label}`);
    for (let index = 0; index < SUBMISSIONS; index += 1) {
      const result = await submitAndWatch(svc.url, clients, `Teardrop ${label} ${index}`, index === 1 ? frameLog : undefined);
      firsts.push(...result.firsts);
      enriched.push(...result.enriched);
    }
  } finally {
    for (const client of clients) client.socket.terminate();
    await svc.stop();
    musicbrainz.close();
  }
  log(`${label}: ${firsts.length} first frames, ${enriched.length} enriched frames; frame log of one submission (client 0): ${JSON.stringify(frameLog)}`);
  const figure = (values, p) => {
    const value = percentile(values, p);
    return { median: value, min: value, max: value };
  };
  return { first: figure(firsts, 99), enrichedP50: figure(enriched, 50), enrichedP99: figure(enriched, 99) };
}

function emit(row, svc, before, goal, met) {
  const ratio = before ? svc.median / before.median : null;
  process.stdout.write(
    JSON.stringify({
      row,
      unit: 'ms',
      svc,
      baseline: before ? { label: 'the code before title-first (BENCH_BEFORE_ROOT)', ...before } : null,
      ratio,
      goal,
      met,
    }) + '\n',
  );
}

async function main() {
  const timer = setTimeout(() => {
    log('time limit reached');
    process.exit(1);
  }, TIME_LIMIT_MS);
  timer.unref();
  const now = await measure(ROOT, 'now');
  const beforeRoot = process.env.BENCH_BEFORE_ROOT;
  const before = beforeRoot ? await measure(path.resolve(beforeRoot), 'before') : null;
  emit(ROWS.first, now.first, before && before.first, `< ${FIRST_FRAME_GOAL_MS} ms`, now.first.max <= FIRST_FRAME_GOAL_MS);
  emit(ROWS.enrichedP50, now.enrichedP50, before && before.enrichedP50, null, null);
  emit(ROWS.enrichedP99, now.enrichedP99, before && before.enrichedP99, null, null);
}

main().catch((error) => {
  log(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
