'use strict';
// Benchmark (docs/enrichment.md): median latency of a submission whose lookups are all cached, against the
// same submission with enrichment disabled, in one run. Goal: ratio <= 1.5.
// Run after `npm run build`: node bench/enrich-cached.bench.js [iterations]
// Loopback only; bounded in time; diagnostics on stderr; one JSON line on stdout.

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const dist = path.join(__dirname, '..', 'dist');
const { configSchema } = require(path.join(dist, 'config', 'schema.js'));
const { composeApp } = require(path.join(dist, 'app', 'start-app.js'));

/** Starts the app as `svc serve` does, keeping its image collector (the bench waits for it to be idle). */
async function startServer(config, options) {
  const composed = await composeApp(config, options);
  const running = await composed.start();
  return { ...running, images: composed.work.images };
}
/** Keeps nothing: the benchmark does not read the log. */
const silentLogger = { info() {}, warn() {}, error() {} };

const ITERATIONS = Math.max(20, Number(process.argv[2]) || 400);
const WARMUP = 50;
const TIME_LIMIT_MS = 120_000;
const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures');
const fixture = (service, name) => fs.readFileSync(path.join(FIXTURES, service, `${name}.json`), 'utf8');

/** A 1x1 PNG: what every image URL of the fake answers. */
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

/**
 * One loopback server answering the few outside calls of the measured track, counting them.
 * Image URLs in the fixtures that name real hosts are rewritten to it: the benchmark must not
 * even resolve an outside name.
 */
function startFakeServices() {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests += 1;
    const url = new URL(req.url, 'http://bench.invalid');
    const self = `http://127.0.0.1:${server.address().port}`;
    const send = (status, body, type = 'application/json') => {
      res.writeHead(status, { 'Content-Type': type });
      res.end(body);
    };
    const p = url.pathname;
    if (p === '/ws/2/recording') return send(200, fixture('musicbrainz', 'search-teardrop'));
    if (p.startsWith('/ws/2/release/')) return send(200, fixture('musicbrainz', 'release-mezzanine'));
    if (p.startsWith('/ws/2/artist/')) return send(200, fixture('musicbrainz', 'artist-massive-attack'));
    if (p.startsWith('/caa/release/')) {
      res.writeHead(307, { Location: `${self}/images/front.jpg` });
      return res.end();
    }
    if (p === '/w/api.php') return send(200, fixture('wikidata', 'entity-massive-attack'));
    if (p.startsWith('/wiki/en/api/rest_v1/page/summary/')) return send(200, fixture('wikipedia', 'en-massive-attack'));
    if (p.startsWith('/adb/123/artist-mb.php')) return send(200, fixture('theaudiodb', 'artist-massive-attack').replaceAll('https://www.theaudiodb.com', self));
    if (p.startsWith('/images/') || p.startsWith('/wiki/Special:FilePath/')) return send(200, PNG, 'image/png');
    return send(404, '{"error":"Not Found"}');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}`, count: () => requests, close: () => new Promise((r) => server.close(r)) })),
  );
}

function config(file, enrichment) {
  const base = configSchema.getDefault();
  // The image store may download from the loopback fake.
  const coverFetch = { allowPrivateAddresses: true };
  const database = { ...base.database, location: file };
  return configSchema.validateSync({ ...base, port: 0, database, coverFetch, enrichment: { ...base.enrichment, ...enrichment } }, { strict: true });
}

async function submit(url) {
  const started = performance.now();
  const response = await fetch(`${url}/v1/remoteinput`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ artist: 'Massive Attack', title: 'Teardrop', genre: 'Downtempo' }),
  });
  const body = await response.json();
  const elapsed = performance.now() - started;
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${JSON.stringify(body)}`);
  return { elapsed, body };
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const round = (n) => Math.round(n * 1000) / 1000;
  return { median: round(median), min: round(sorted[0]), max: round(sorted[sorted.length - 1]) };
}

async function main() {
  const deadline = Date.now() + TIME_LIMIT_MS;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  const fakes = await startFakeServices();
  const enriched = await startServer(
    config(path.join(dir, 'enriched.db'), {
      enabled: true,
      contact: 'bench@localhost',
      musicbrainz: { enabled: true, baseUrl: `${fakes.url}/ws/2` },
      coverartarchive: { enabled: true, baseUrl: `${fakes.url}/caa` },
      wikidata: { enabled: true, baseUrl: fakes.url },
      wikipedia: { enabled: true, baseUrl: `${fakes.url}/wiki/{lang}`, language: 'en' },
      commons: { baseUrl: fakes.url },
      theaudiodb: { enabled: true, baseUrl: `${fakes.url}/adb`, apiKey: '123' },
      fanarttv: { enabled: false, baseUrl: fakes.url, apiKey: '' },
      acoustid: { enabled: false, baseUrl: fakes.url, apiKey: '' },
    }),
    { logger: silentLogger },
  );
  const plain = await startServer(config(path.join(dir, 'plain.db'), { enabled: false }), { logger: silentLogger });
  try {
    // Prime the cache: the first submission asks the (fake) services, MusicBrainz at 1 request/s.
    const first = await submit(enriched.url);
    await enriched.images.idle();
    const primed = fakes.count();
    if (first.body.processed_metadata.album !== 'Mezzanine') throw new Error('priming did not enrich the track');
    process.stderr.write(`primed the cache with ${primed} outside requests in ${first.elapsed.toFixed(0)} ms\n`);

    for (let i = 0; i < WARMUP; i += 1) {
      await submit(enriched.url);
      await submit(plain.url);
    }
    const cached = [];
    const disabled = [];
    // Alternate the two so that machine drift hits both alike.
    for (let i = 0; i < ITERATIONS && Date.now() < deadline; i += 1) {
      if (i % 2 === 0) {
        cached.push((await submit(enriched.url)).elapsed);
        disabled.push((await submit(plain.url)).elapsed);
      } else {
        disabled.push((await submit(plain.url)).elapsed);
        cached.push((await submit(enriched.url)).elapsed);
      }
    }
    const extra = fakes.count() - primed;
    if (extra !== 0) throw new Error(`cached submissions made ${extra} outside requests`);
    process.stderr.write(`${cached.length} cached and ${disabled.length} disabled submissions; no outside request after priming\n`);

    const svc = stats(cached);
    const baseline = stats(disabled);
    const ratio = Math.round((svc.median / baseline.median) * 100) / 100;
    process.stdout.write(
      JSON.stringify({
        row: 'submission latency, all lookups cached vs enrichment disabled',
        unit: 'ms',
        svc,
        baseline: { label: 'enrichment disabled', ...baseline },
        ratio,
        goal: '<= 1.5',
        met: ratio <= 1.5,
      }) + '\n',
    );
  } finally {
    await enriched.close();
    await plain.close();
    await fakes.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`enrich-cached bench failed: ${error.stack || error}\n`);
  // The fake services may still be listening: exit now, so the runner reports the failure
  // instead of waiting out this file's budget.
  process.exit(1);
});
