'use strict';
// Row 6: resident memory (VmRSS) of svc when idle, and after 10,000 and 20,000 submissions
// (POST /v1/remoteinput, enrichment off, 50 connections). Each round starts a fresh svc on a
// fresh database, next to a fresh bare node:http process for the idle comparison.
// Each figure is read twice: SETTLE_MS after the work, and SETTLED_MS after it, when the server's
// idle-time collection has given back the young generation V8 grew for the burst
// (src/server/guards/idle-heap.ts, docs/limits-and-load.md "What one record costs"). The rows compare
// the settled figures, idle with idle; the early ones are in the rows' details.
// With BENCH_BEFORE_ROOT (a built checkout of the code before), that code is measured the same
// way in alternate rounds of the same run, and its figures are in the rows' details.

const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { startSvc } = require('./lib/svc-process');
const { startBaseline } = require('./lib/baseline');
const { runLoad, assertCleanRun } = require('./lib/load');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { submissionLoad } = require('./lib/fixtures');
const { procMemory, MiB } = require('./lib/rss');
const { median } = require('./lib/stats');

const ROUNDS = envInt('BENCH_MEMORY_ROUNDS', 3);
const SUBMISSIONS = 10_000;
const CONNECTIONS = 50;
const SETTLE_MS = 1500;
// The idle-time collection runs after 6 s of quiet, read once a second, and once more 6 s later
// when V8 kept the young generation the first time: 15 s covers both.
const SETTLED_MS = 15_000;
const ROW_IDLE = 'RSS of an idle server';
const ROW_10K = 'RSS after 10,000 submissions';
const ROW_20K = 'RSS after 20,000 / after 10,000 submissions';
// Node flags for svc, e.g. BENCH_SVC_NODE_ARGS=--max-semi-space-size=4 (docs/limits-and-load.md "What one record costs").
const NODE_ARGS = (process.env.BENCH_SVC_NODE_ARGS || '').split(' ').filter(Boolean);
const BEFORE_ROOT = process.env.BENCH_BEFORE_ROOT;

/** VmRSS SETTLE_MS and SETTLED_MS after the work before it; the second with the peak so far. */
async function settle(pid) {
  await sleep(SETTLE_MS);
  const early = procMemory(pid).rss;
  await sleep(SETTLED_MS - SETTLE_MS);
  return { early, ...procMemory(pid) };
}

/** One round of one build: `bin` is the before build's bin/svc.js, or undefined for this one. */
const measureRound = (name, bin) => async (round) => {
  const [svc, bare] = await Promise.all([
    startSvc({ nodeArgs: NODE_ARGS, ...(bin ? { bin } : {}) }),
    startBaseline({ headers: { 'content-type': 'application/json' }, body: '{}' }),
  ]);
  try {
    const idle = await settle(svc.pid);
    const bareIdle = procMemory(bare.pid).rss;
    const submit = async (label) => assertCleanRun(await runLoad(submissionLoad(svc.url, { connections: CONNECTIONS, amount: SUBMISSIONS }), { timeoutMs: 120_000 }), label);
    const first = await submit(`round ${round + 1}, first 10,000`);
    const after10k = await settle(svc.pid);
    await submit(`round ${round + 1}, second 10,000`);
    const after20k = await settle(svc.pid);
    const sample = {
      idle: idle.rss,
      bareIdle,
      after10k: after10k.rss,
      after20k: after20k.rss,
      peak: after20k.hwm,
      early: { idle: idle.early, after10k: after10k.early, after20k: after20k.early },
    };
    log(`${name} round ${round + 1}: idle ${mib(idle.rss)} MiB (${mib(idle.early)} at ${SETTLE_MS} ms; bare node:http ${mib(bareIdle)}), ` +
      `after 10k ${mib(sample.after10k)} (${mib(after10k.early)}), after 20k ${mib(sample.after20k)} (${mib(after20k.early)}), ` +
      `peak ${mib(sample.peak)} MiB; ${first.requestsPerSecond.toFixed(0)} submissions/s`);
    return sample;
  } finally {
    await Promise.all([svc.stop(), bare.stop()]);
  }
};

async function main() {
  const builds = { svc: measureRound('svc'), ...(BEFORE_ROOT ? { before: measureRound('before', path.join(BEFORE_ROOT, 'bin', 'svc.js')) } : {}) };
  const { svc: samples, before } = await alternate(ROUNDS, builds, { minRounds: 2 });
  const inMiB = (key, list = samples) => list.map((s) => mib(s[key]));
  const earlyMiB = (key, list = samples) => list.map((s) => mib(s.early[key]));
  const early = (key, of) => ({
    [`at${SETTLE_MS}ms`]: earlyMiB(key),
    [`at${SETTLE_MS}msRatio`]: ratioOfMedians(earlyMiB(key), earlyMiB(of)),
    ...(before
      ? {
          before: inMiB(key, before),
          beforeRatio: ratioOfMedians(inMiB(key, before), inMiB(of, before)),
          [`beforeAt${SETTLE_MS}msRatio`]: ratioOfMedians(earlyMiB(key, before), earlyMiB(of, before)),
        }
      : {}),
  });
  emitRow({
    row: ROW_IDLE,
    unit: 'MiB',
    svc: inMiB('idle'),
    baseline: { label: 'bare node:http, idle', values: inMiB('bareIdle') },
    goal: null,
    details: { settledAfterMs: SETTLED_MS, [`at${SETTLE_MS}ms`]: earlyMiB('idle'), ...(before ? { before: inMiB('idle', before) } : {}) },
  });
  emitRow({
    row: NODE_ARGS.length ? `${ROW_10K} (node ${NODE_ARGS.join(' ')})` : ROW_10K,
    unit: 'MiB',
    svc: inMiB('after10k'),
    baseline: { label: 'the same svc, idle', values: inMiB('idle') },
    // A small bound: 0.4 of the idle size again. What remains once settled is SQLite's page cache
    // filled and the old generation V8 grew before its next full collection, not a leak:
    // docs/limits-and-load.md "What one record costs".
    goal: '<= 1.4',
    details: { peakMiB: inMiB('peak'), ...early('after10k', 'idle') },
  });
  emitRow({
    row: ROW_20K,
    unit: 'MiB',
    svc: inMiB('after20k'),
    baseline: { label: 'the same svc after 10,000', values: inMiB('after10k') },
    // The leak check. RSS at a given point varies with the state of V8's heap (measured spread up
    // to 11 MiB) on about 100 MiB, plus a margin: 1.2. A server keeping 2 KiB per submission
    // (20 MiB per 10,000) would cross it.
    goal: '<= 1.2',
    details: early('after20k', 'after10k'),
  });
}

function ratioOfMedians(values, baseline) {
  return Math.round((median(values) / median(baseline)) * 100) / 100;
}

function mib(bytes) {
  return Math.round((bytes / MiB) * 10) / 10;
}

main().catch((error) => {
  log(error.stack ?? String(error));
  emitFailure(ROW_10K, error, 'MiB');
  process.exitCode = 1;
});
