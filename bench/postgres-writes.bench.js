'use strict';
// PostgreSQL writes (docs/several-instances.md "Write throughput"). Two rows, in one run:
// 1. POST /v1/remoteinput writes/s of one instance on PostgreSQL, this build against the previous
//    release (BENCH_BEFORE_ROOT, a built checkout; or BENCH_BEFORE_REF, default e04b372, the last
//    commit before the 27 November merges: `git archive`d and built in a temp dir), alternating
//    rounds, each on a fresh database; a sequential writer's p50 is in the details. Every 2xx must
//    be a stored row. Goal >= 0.8.
// 2. Writes/s of three instances of this build on one database (the same load split over them)
//    against one instance of it, alternating. Goal > 1: writes scale with instances.
// PostgreSQL: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres).

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const pg = require('pg');
const { startSvc, ROOT } = require('./lib/svc-process');
const { runLoad, assertCleanRun } = require('./lib/load');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { submissionLoad } = require('./lib/fixtures');
const { median } = require('./lib/stats');
const { assertLoopbackUrl } = require('./lib/loopback');

const ROUNDS = envInt('BENCH_ROUNDS', 4);
const WRITES = envInt('BENCH_PG_WRITES', 2000);
const SEQUENTIAL = 200;
const CONNECTIONS = 20;
const ADMIN_URL = process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const BEFORE_REF = process.env.BENCH_BEFORE_REF || 'e04b372';
const ROW_RELEASE = 'POST /v1/remoteinput writes/s on PostgreSQL, 1 instance (20 conn, stored) vs the previous release';
const ROW_SCALE = 'POST /v1/remoteinput writes/s on PostgreSQL, 3 instances vs 1 (20 conn each side, stored)';

async function admin(sql) {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A database of its own; `stored()` counts its rows, `drop()` removes it. */
async function createDatabase() {
  const name = `svc_bench_w_${process.pid}_${Date.now().toString(36)}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  assertLoopbackUrl(`http://${url.host}/`);
  return {
    url: url.toString(),
    async stored() {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        return Number((await client.query('SELECT count(*) AS n FROM tracks')).rows[0].n);
      } finally {
        await client.end();
      }
    },
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** The previous release: BENCH_BEFORE_ROOT, or BEFORE_REF extracted with this checkout's node_modules and built. */
function beforeBin(dir) {
  if (process.env.BENCH_BEFORE_ROOT) return path.join(process.env.BENCH_BEFORE_ROOT, 'bin', 'svc.js');
  const tree = path.join(dir, 'before');
  fs.mkdirSync(tree);
  const archive = execFileSync('git', ['-C', ROOT, 'archive', BEFORE_REF], { maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', tree], { input: archive });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'));
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(tree, 'tsconfig.json')], { stdio: 'ignore' });
  return path.join(tree, 'bin', 'svc.js');
}

/** One POST at a time: the p50 in ms. */
async function sequentialP50(url, tag) {
  const times = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const started = performance.now();
    const res = await fetch(`${url}/v1/remoteinput`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ artist: 'Seq', title: `${tag} ${i}` }) });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`sequential POST answered ${res.status}`);
    times.push(performance.now() - started);
  }
  return median(times);
}

/**
 * `count` instances of `bin` on a fresh database: WRITES submissions over them (20 connections
 * each), writes/s of the whole; every 2xx must be a stored row.
 */
async function measure(bin, count, tag) {
  const database = await createDatabase();
  const instances = [];
  try {
    for (let i = 0; i < count; i++) instances.push(await startSvc({ dbFile: database.url, cpu: undefined, ...(bin ? { bin } : {}) }));
    const p50 = count === 1 ? await sequentialP50(instances[0].url, tag) : undefined;
    const started = performance.now();
    const results = await Promise.all(
      instances.map((svc, index) =>
        runLoad(submissionLoad(svc.url, { connections: CONNECTIONS, amount: Math.round(WRITES / count) }), { timeoutMs: 120_000 }).then((result) =>
          assertCleanRun(result, `${tag} instance ${index + 1}`),
        ),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const ok = results.reduce((sum, result) => sum + result['2xx'], 0);
    await Promise.all(instances.splice(0).map((svc) => svc.stop()));
    const stored = await database.stored();
    const expected = ok + (p50 === undefined ? 0 : SEQUENTIAL);
    if (stored !== expected) throw new Error(`${tag}: ${stored} rows for ${expected} 2xx`);
    return { writesPerSecond: ok / seconds, p50 };
  } finally {
    await Promise.all(instances.map((svc) => svc.stop()));
    await database.drop();
  }
}

async function releaseRow(dir) {
  log(`building the previous release (${process.env.BENCH_BEFORE_ROOT ?? BEFORE_REF})`);
  const before = beforeBin(dir);
  const round = (name, bin) => async (index) => {
    const result = await measure(bin, 1, `${name} round ${index + 1}`);
    log(`round ${index + 1} ${name}: ${result.writesPerSecond.toFixed(0)} writes/s, sequential p50 ${result.p50.toFixed(2)} ms`);
    return result;
  };
  const samples = await alternate(ROUNDS, { svc: round('this build', undefined), before: round('previous release', before) }, { minRounds: 2 });
  emitRow({
    row: ROW_RELEASE,
    unit: 'writes/s',
    svc: samples.svc.map((s) => s.writesPerSecond),
    baseline: { label: `the previous release (${process.env.BENCH_BEFORE_ROOT ? 'BENCH_BEFORE_ROOT' : BEFORE_REF}), same run`, values: samples.before.map((s) => s.writesPerSecond) },
    goal: '>= 0.8',
    details: { sequentialP50Ms: { svc: samples.svc.map((s) => s.p50), before: samples.before.map((s) => s.p50) }, writesPerRound: WRITES },
  });
}

async function scaleRow() {
  const round = (count) => async (index) => {
    const result = await measure(undefined, count, `${count} instance(s) round ${index + 1}`);
    log(`round ${index + 1} ${count} instance(s): ${result.writesPerSecond.toFixed(0)} writes/s`);
    return result;
  };
  const samples = await alternate(Math.min(ROUNDS, 3), { three: round(3), one: round(1) }, { minRounds: 2 });
  emitRow({
    row: ROW_SCALE,
    unit: 'writes/s',
    svc: samples.three.map((s) => s.writesPerSecond),
    baseline: { label: 'one instance of this build, same run', values: samples.one.map((s) => s.writesPerSecond) },
    goal: '> 1',
    details: { writesPerRound: WRITES },
  });
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-pgw-'));
  try {
    for (const [row, measureRow] of [
      [ROW_RELEASE, () => releaseRow(dir)],
      [ROW_SCALE, scaleRow],
    ]) {
      try {
        await measureRow();
      } catch (error) {
        log(error.stack ?? String(error));
        emitFailure(row, error, 'writes/s');
        process.exitCode = 1;
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
