'use strict';
// Row 6: resident memory (VmRSS) of svc when idle, and after 10,000 and 20,000 submissions
// (POST /v1/remoteinput, enrichment off, 50 connections). Each round starts a fresh svc on a
// fresh database, next to a fresh bare node:http process for the idle comparison.

const { setTimeout: sleep } = require('node:timers/promises');
const { startSvc } = require('./lib/svc-process');
const { startBaseline } = require('./lib/baseline');
const { runLoad, assertCleanRun } = require('./lib/load');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { submissionLoad } = require('./lib/fixtures');
const { procMemory, MiB } = require('./lib/rss');

const ROUNDS = envInt('BENCH_MEMORY_ROUNDS', 3);
const SUBMISSIONS = 10_000;
const CONNECTIONS = 50;
const SETTLE_MS = 1500;
const ROW_IDLE = 'RSS of an idle server';
const ROW_10K = 'RSS after 10,000 submissions';
const ROW_20K = 'RSS after 20,000 / after 10,000 submissions';
// Node flags for svc, e.g. BENCH_SVC_NODE_ARGS=--max-semi-space-size=4 (docs/limits-and-load.md "What one record costs").
const NODE_ARGS = (process.env.BENCH_SVC_NODE_ARGS || '').split(' ').filter(Boolean);

async function measureRound(round) {
  const [svc, bare] = await Promise.all([startSvc({ nodeArgs: NODE_ARGS }), startBaseline({ headers: { 'content-type': 'application/json' }, body: '{}' })]);
  try {
    await sleep(SETTLE_MS);
    const idle = procMemory(svc.pid).rss;
    const bareIdle = procMemory(bare.pid).rss;
    const submit = async (label) => assertCleanRun(await runLoad(submissionLoad(svc.url, { connections: CONNECTIONS, amount: SUBMISSIONS }), { timeoutMs: 120_000 }), label);
    const first = await submit(`round ${round + 1}, first 10,000`);
    await sleep(SETTLE_MS);
    const after10k = procMemory(svc.pid);
    await submit(`round ${round + 1}, second 10,000`);
    await sleep(SETTLE_MS);
    const after20k = procMemory(svc.pid);
    const sample = { idle, bareIdle, after10k: after10k.rss, after20k: after20k.rss, peak: after20k.hwm };
    log(`round ${round + 1}: idle ${mib(idle)} MiB (bare node:http ${mib(bareIdle)}), after 10k ${mib(sample.after10k)}, ` +
      `after 20k ${mib(sample.after20k)}, peak ${mib(sample.peak)} MiB; ${first.requestsPerSecond.toFixed(0)} submissions/s`);
    return sample;
  } finally {
    await Promise.all([svc.stop(), bare.stop()]);
  }
}

async function main() {
  const { svc: samples } = await alternate(ROUNDS, { svc: measureRound }, { minRounds: 2 });
  const inMiB = (key) => samples.map((s) => mib(s[key]));
  emitRow({
    row: ROW_IDLE,
    unit: 'MiB',
    svc: inMiB('idle'),
    baseline: { label: 'bare node:http, idle', values: inMiB('bareIdle') },
    goal: null,
  });
  emitRow({
    row: NODE_ARGS.length ? `${ROW_10K} (node ${NODE_ARGS.join(' ')})` : ROW_10K,
    unit: 'MiB',
    svc: inMiB('after10k'),
    baseline: { label: 'the same svc, idle', values: inMiB('idle') },
    // A small bound: 0.4 of the idle size again. Growth here is caches filling (SQLite's page
    // cache) and V8's young generation grown under load, not a leak: docs/limits-and-load.md
    // "What one record costs".
    goal: '<= 1.4',
    details: { peakMiB: inMiB('peak') },
  });
  emitRow({
    row: ROW_20K,
    unit: 'MiB',
    svc: inMiB('after20k'),
    baseline: { label: 'the same svc after 10,000', values: inMiB('after10k') },
    // The leak check. 10,000 more submissions may still fill SQLite's page cache (capped at
    // 16,000 KiB by better-sqlite3's build; measured about 4 MiB per 10,000 of these rows), and
    // RSS at a given point varies with the state of V8's heap (measured spread up to 11 MiB),
    // i.e. up to ~15 MiB on ~113 MiB, plus a margin: 1.2. A server keeping 2 KiB per
    // submission (20 MiB per 10,000) would cross it.
    goal: '<= 1.2',
  });
}

function mib(bytes) {
  return Math.round((bytes / MiB) * 10) / 10;
}

main().catch((error) => {
  log(error.stack ?? String(error));
  emitFailure(ROW_10K, error, 'MiB');
  process.exitCode = 1;
});
