'use strict';
// Row 2: what the write path costs. POST /v1/remoteinput (enrichment off, stored in SQLite) at
// 50 connections, alternating with GET /v1/last on the same svc process (row 1's svc figure,
// measured again in this run so that drift hits both). Afterwards the SQLite file is opened
// read-only and every submission the benchmark sent must be there: rows == 2xx == sent.

const Database = require('better-sqlite3');
const { startSvc } = require('./lib/svc-process');
const { runLoad, assertCleanRun } = require('./lib/load');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { submissionLoad } = require('./lib/fixtures');
const { measureCpu } = require('./lib/cpu');

const ROUNDS = envInt('BENCH_ROUNDS', 5);
const DURATION = envInt('BENCH_DURATION', 5);
const CONNECTIONS = 50;
const WARMUP_SUBMISSIONS = 1000;
const ROW_RPS = 'POST /v1/remoteinput throughput (50 conn, stored)';
const ROW_P99 = 'POST /v1/remoteinput p99 latency (50 conn)';
const ROW_STORED = 'POST /v1/remoteinput: rows in SQLite / 2xx answers';

async function main() {
  const svc = await startSvc({ keepDir: true });
  const sentTotals = { sent: 0, ok: 0 };
  let stored;
  let samples;
  try {
    const post = async (amount, label) => {
      // Submissions run to a fixed count, not a duration: a duration run is cut off with
      // requests in flight, and then "every submission sent is stored" could not be checked exactly.
      const { result, cpuSeconds } = await measureCpu(svc.pid, () => runLoad(submissionLoad(svc.url, { connections: CONNECTIONS, amount }), { timeoutMs: 90_000 }));
      sentTotals.sent += result.sent;
      sentTotals.ok += result['2xx'];
      return { ...assertCleanRun(result, label), serverCpu: cpuSeconds / result.activeSeconds };
    };
    const get = async (duration, label) => {
      const { result, cpuSeconds } = await measureCpu(svc.pid, () => runLoad({ url: `${svc.url}/v1/last`, connections: CONNECTIONS, duration }));
      return { ...assertCleanRun(result, label), serverCpu: cpuSeconds / result.activeSeconds };
    };

    await post(WARMUP_SUBMISSIONS, 'POST warm-up');
    await get(2, 'GET warm-up');
    // A warm calibration run sizes the measured ones, so a POST run lasts about as long as a GET run.
    const calibration = await post(2 * WARMUP_SUBMISSIONS, 'POST calibration');
    const amount = Math.min(100_000, Math.max(2_000, Math.round(calibration.requestsPerSecond * DURATION)));
    log(`svc ${svc.url} (pid ${svc.pid}); calibration ${calibration.requestsPerSecond.toFixed(0)} submissions/s, ${amount} submissions per round`);

    samples = await alternate(ROUNDS, {
      post: async (round) => report(round, 'POST', await post(amount, `POST round ${round + 1}`)),
      get: async (round) => report(round, 'GET', await get(DURATION, `GET round ${round + 1}`)),
    });
  } finally {
    await svc.stop();
    try {
      stored = countStored(svc.dbFile);
    } finally {
      require('node:fs').rmSync(svc.dir, { recursive: true, force: true });
    }
  }

  const label = 'svc GET /v1/last, same run';
  emitRow({
    row: ROW_RPS,
    unit: 'req/s',
    svc: samples.post.map((r) => r.requestsPerSecond),
    baseline: { label, values: samples.get.map((r) => r.requestsPerSecond) },
    goal: null,
    details: { serverCpuPost: samples.post.map((r) => round2(r.serverCpu)), serverCpuGet: samples.get.map((r) => round2(r.serverCpu)) },
  });
  emitRow({
    row: ROW_P99,
    unit: 'ms',
    svc: samples.post.map((r) => r.latency.p99),
    baseline: { label, values: samples.get.map((r) => r.latency.p99) },
    goal: null,
  });

  const problems = [];
  if (sentTotals.sent !== sentTotals.ok) problems.push(`${sentTotals.sent} sent but ${sentTotals.ok} answered 2xx`);
  if (stored.rows !== sentTotals.ok) problems.push(`${stored.rows} rows stored for ${sentTotals.ok} 2xx answers`);
  if (stored.distinctTitles !== stored.rows) problems.push(`only ${stored.distinctTitles} distinct titles in ${stored.rows} rows`);
  log(`stored ${stored.rows} rows (${stored.distinctTitles} distinct titles); sent ${sentTotals.sent}, 2xx ${sentTotals.ok}`);
  emitRow({
    row: ROW_STORED,
    unit: 'rows',
    svc: [stored.rows],
    baseline: { label: '2xx answers counted by autocannon', values: [sentTotals.ok] },
    goal: '== 1',
    error: problems.length > 0 ? problems.join('; ') : undefined,
    details: { sent: sentTotals.sent, ok: sentTotals.ok, rows: stored.rows, distinctTitles: stored.distinctTitles },
  });
}

/** Counts what svc stored, read-only, after svc has closed the file. */
function countStored(dbFile) {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT count(*) AS rows, count(DISTINCT json_extract(metadata, '$.title')) AS distinctTitles FROM tracks`).get();
  } finally {
    db.close();
  }
}

function report(round, name, result) {
  log(`round ${round + 1} ${name.padEnd(4)} ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
    `server CPU ${(result.serverCpu * 100).toFixed(0)}%, load generator CPU ${(result.loadGeneratorCpu * 100).toFixed(0)}%`);
  return result;
}

function round2(value) {
  return Math.round(value * 100) / 100;
}

main().catch((error) => {
  log(error.stack ?? String(error));
  emitFailure(ROW_RPS, error, 'req/s');
  process.exitCode = 1;
});
