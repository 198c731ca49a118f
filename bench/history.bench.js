'use strict';
// Row 7 (docs/http-api.md): GET /v1/history?limit=100 is served from an index, not a scan.
//   a) its HTTP throughput with 100,000 stored records against GET /v1/last on the same svc
//      process in the same run (goal >= 0.25; a page of 100 is ~100 times the bytes of one track).
//      Both are served from copies made once per change, as a polling page sees them.
//   b) the page query itself, never cached: svc's store (dist/store) on the 100,000-record file
//      against the 1,000-record file, in this process, alternating (goal >= 0.8: a page must cost
//      the same whatever the table size). Each round runs three kinds of page: the newest, one
//      from the middle through a `before` cursor, and a since/until window in the middle.
// The databases are filled before svc starts, through svc's own store, one track every 3 minutes.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startSvc, ROOT } = require('./lib/svc-process');
const { runLoad, assertCleanRun } = require('./lib/load');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');

const ROUNDS = envInt('BENCH_ROUNDS', 3);
const DURATION = envInt('BENCH_DURATION', 4);
const WARMUP = 2;
const CONNECTIONS = 50;
const PAGE_PATH = '/v1/history?limit=100';
const ROW_VS_LAST = 'GET /v1/history?limit=100, 100k records (50 conn)';
const ROW_VS_SMALL = 'history page query (100 records), 100k vs 1k records, uncached';
const QUERY_SECONDS = 2;

/** Fills a new SQLite file with `count` records shaped like bench submissions. */
function fillDatabase(file, count) {
  const { openDatabase } = require(path.join(ROOT, 'dist', 'store', 'sqlite', 'database'));
  const { createTrackStore } = require(path.join(ROOT, 'dist', 'store', 'sqlite', 'tracks'));
  const db = openDatabase(file);
  try {
    const tracks = createTrackStore(db);
    const start = Date.now() - count * 180_000;
    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        tracks.insert({
          receivedSeq: i + 1,
          receivedAt: new Date(start + i * 180_000).toISOString(),
          metadata: {
            artist: `Bench Artist ${i % 997}`,
            title: `Bench Title ${i}`,
            album: 'Bench Album',
            genre: 'Electronic',
            date: '2024',
            publisher: 'Bench Records',
            bpm: 124,
            key: '8A',
            duration: 312,
            isrc: 'GBAAA2400001',
          },
        });
      }
    })();
  } finally {
    db.close();
  }
}

/** svc's store over a filled file, with the three kinds of page to ask it. */
async function openStore(file, count) {
  const { openDatabase } = require(path.join(ROOT, 'dist', 'store', 'sqlite', 'database'));
  const { createTrackStore } = require(path.join(ROOT, 'dist', 'store', 'sqlite', 'tracks'));
  const db = openDatabase(file);
  const tracks = createTrackStore(db);
  const middle = (await tracks.history({ limit: 1, before: Math.floor(count / 2) })).records[0];
  const windowEnd = new Date(Date.parse(middle.receivedAt) + 60 * 180_000).toISOString();
  const pages = [{ limit: 100 }, { limit: 100, before: middle.dbid }, { limit: 100, since: middle.receivedAt, until: windowEnd }];
  for (const query of pages) {
    if ((await tracks.history(query)).records.length < 60) throw new Error(`page ${JSON.stringify(query)} of ${file} is short`);
  }
  return { tracks, pages, close: () => db.close() };
}

/** Page queries per second over QUERY_SECONDS, the three kinds in turn (the store answers through promises). */
async function pageQueriesPerSecond(store) {
  const started = process.hrtime.bigint();
  const until = started + BigInt(QUERY_SECONDS * 1e9);
  let done = 0;
  let rows = 0;
  while (process.hrtime.bigint() < until) {
    for (const query of store.pages) rows += (await store.tracks.history(query)).records.length;
    done += store.pages.length;
  }
  if (rows === 0) throw new Error('no rows read');
  return done / (Number(process.hrtime.bigint() - started) / 1e9);
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-history-'));
  const servers = [];
  try {
    const bigFile = path.join(dir, 'big.db');
    const smallFile = path.join(dir, 'small.db');
    const started = Date.now();
    fillDatabase(bigFile, 100_000);
    fillDatabase(smallFile, 1_000);
    log(`filled 100,000 + 1,000 records in ${Date.now() - started} ms`);

    const big = await startSvc({ dbFile: bigFile });
    servers.push(big);
    const page = await (await fetch(`${big.url}${PAGE_PATH}`)).json();
    if (!Array.isArray(page.tracks) || page.tracks.length !== 100 || page.tracks[0].title !== 'Bench Title 99999') {
      throw new Error(`${big.url}${PAGE_PATH} did not answer the newest 100 of 100,000 records`);
    }

    const urls = {
      historyBig: `${big.url}${PAGE_PATH}`,
      lastBig: `${big.url}/v1/last`,
    };
    const load = async (url, duration, label) => assertCleanRun(await runLoad({ url, connections: CONNECTIONS, duration }), label);
    for (const [name, url] of Object.entries(urls)) {
      const result = await load(url, WARMUP, `${name} warm-up`);
      log(`warm-up ${name}: ${result.requestsPerSecond.toFixed(0)} req/s`);
    }
    const http = await alternate(ROUNDS, Object.fromEntries(
      Object.entries(urls).map(([name, url]) => [name, async (round) => {
        const result = await load(url, DURATION, `${name} round ${round + 1}`);
        log(`round ${round + 1} ${name.padEnd(12)} ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.latency.p99} ms`);
        return result;
      }]),
    ));
    const rps = (name) => http[name].map((r) => r.requestsPerSecond);
    emitRow({
      row: ROW_VS_LAST,
      unit: 'req/s',
      svc: rps('historyBig'),
      baseline: { label: 'GET /v1/last, same svc, same run', values: rps('lastBig') },
      goal: '>= 0.25',
      details: { p99HistoryMs: http.historyBig.map((r) => r.latency.p99), p99LastMs: http.lastBig.map((r) => r.latency.p99) },
    });

    const stores = { big: await openStore(bigFile, 100_000), small: await openStore(smallFile, 1_000) };
    try {
      const queries = await alternate(ROUNDS, {
        big: () => pageQueriesPerSecond(stores.big),
        small: () => pageQueriesPerSecond(stores.small),
      });
      log(`page queries/s, 100k: ${queries.big.map((q) => q.toFixed(0)).join(', ')}; 1k: ${queries.small.map((q) => q.toFixed(0)).join(', ')}`);
      emitRow({
        row: ROW_VS_SMALL,
        unit: 'pages/s',
        svc: queries.big,
        baseline: { label: 'same pages, store with 1k records', values: queries.small },
        goal: '>= 0.8',
      });
    } finally {
      stores.big.close();
      stores.small.close();
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  log(error.stack ?? String(error));
  emitFailure(ROW_VS_LAST, error, 'req/s');
  process.exitCode = 1;
});
