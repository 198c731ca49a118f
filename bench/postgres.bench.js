'use strict';
// Several instances on one PostgreSQL database (docs/several-instances.md). Three rows, in one run:
// 1. POST /v1/remoteinput throughput with PostgreSQL against SQLite (same load, alternating
//    rounds); afterwards every 2xx must be a stored row on both.
// 2. Fan-out through 3 instances with 1,000 WebSocket clients each: from the 200 of a submission
//    on instance A to the last of instance C's clients receiving its frame (p99 per round). The
//    baseline is the same measure on A's own clients. Goal p99 < 250 ms.
// 3. GET /v1/last through nginx (examples/nginx/nginx.conf) in front of the 3 instances, against
//    one instance directly.
// PostgreSQL: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres); each run
// creates its own database and drops it. nginx: the Debian package (/usr/sbin/nginx).

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const pg = require('pg');
const { startSvc, ROOT } = require('./lib/svc-process');
const { runLoad, assertCleanRun } = require('./lib/load');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { submissionBody, submissionLoad } = require('./lib/fixtures');
const { CPU, spawnPinned, track, stopProcess } = require('./lib/processes');
const { assertLoopbackUrl } = require('./lib/loopback');
const { connectFleet } = require('./lib/ws-fleet');

const ROUNDS = envInt('BENCH_ROUNDS', 5);
const DURATION = envInt('BENCH_DURATION', 5);
const CONNECTIONS = 50;
const SOCKETS_PER_INSTANCE = envInt('BENCH_PG_SOCKETS', 1000);
const FANOUT_SUBMISSIONS_PER_ROUND = 20;
const ADMIN_URL = process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((file) => fs.existsSync(file));

const ROW_SUBMIT = 'POST /v1/remoteinput throughput, PostgreSQL vs SQLite (50 conn, stored)';
const ROW_FANOUT = 'fan-out 3 instances x 1000 sockets: 200 on A -> last socket on C, p99';
const ROW_NGINX = 'GET /v1/last through nginx + 3 instances vs 1 instance direct (50 conn)';

async function createDatabase() {
  const name = `svc_bench_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  assertLoopbackUrl(`http://${url.host}/`);
  return {
    url: url.toString(),
    async count() {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        const result = await client.query("SELECT count(*) AS n, count(DISTINCT metadata->>'title') AS titles FROM tracks");
        return { rows: Number(result.rows[0].n), distinctTitles: Number(result.rows[0].titles) };
      } finally {
        await client.end();
      }
    },
    async drop() {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

function countSqlite(dbFile) {
  const Database = require('better-sqlite3');
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT count(*) AS rows, count(DISTINCT json_extract(metadata, '$.title')) AS distinctTitles FROM tracks`).get();
  } finally {
    db.close();
  }
}

/** Row 1. */
async function submissionThroughput() {
  const database = await createDatabase();
  const onPostgres = await startSvc({ dbFile: database.url });
  const onSqlite = await startSvc({ keepDir: true });
  const totals = { postgres: { sent: 0, ok: 0 }, sqlite: { sent: 0, ok: 0 } };
  let samples;
  let stored;
  try {
    const post = async (svc, name, amount) => {
      const result = assertCleanRun(await runLoad(submissionLoad(svc.url, { connections: CONNECTIONS, amount }), { timeoutMs: 90_000 }), `${name} POST`);
      totals[name].sent += result.sent;
      totals[name].ok += result['2xx'];
      return result;
    };
    await post(onPostgres, 'postgres', 500);
    await post(onSqlite, 'sqlite', 500);
    const calibration = await post(onSqlite, 'sqlite', 2000);
    const amount = Math.min(50_000, Math.max(2_000, Math.round(calibration.requestsPerSecond * DURATION)));
    log(`submission rounds of ${amount}`);
    samples = await alternate(ROUNDS, {
      postgres: async (round) => {
        const result = await post(onPostgres, 'postgres', amount);
        log(`round ${round + 1} PostgreSQL ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.latency.p99} ms`);
        return result;
      },
      sqlite: async (round) => {
        const result = await post(onSqlite, 'sqlite', amount);
        log(`round ${round + 1} SQLite     ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.latency.p99} ms`);
        return result;
      },
    });
  } finally {
    await onPostgres.stop();
    await onSqlite.stop();
    try {
      stored = { postgres: await database.count(), sqlite: countSqlite(onSqlite.dbFile) };
    } finally {
      fs.rmSync(onSqlite.dir, { recursive: true, force: true });
      await database.drop();
    }
  }
  const problems = [];
  for (const name of ['postgres', 'sqlite']) {
    if (totals[name].sent !== totals[name].ok) problems.push(`${name}: ${totals[name].sent} sent, ${totals[name].ok} 2xx`);
    if (stored[name].rows !== totals[name].ok) problems.push(`${name}: ${stored[name].rows} rows for ${totals[name].ok} 2xx`);
    if (stored[name].distinctTitles !== stored[name].rows) problems.push(`${name}: ${stored[name].distinctTitles} distinct titles in ${stored[name].rows} rows`);
  }
  log(`stored: PostgreSQL ${stored.postgres.rows} rows for ${totals.postgres.ok} 2xx, SQLite ${stored.sqlite.rows} rows for ${totals.sqlite.ok} 2xx`);
  emitRow({
    row: ROW_SUBMIT,
    unit: 'req/s',
    svc: samples.postgres.map((r) => r.requestsPerSecond),
    baseline: { label: 'svc on SQLite, same run', values: samples.sqlite.map((r) => r.requestsPerSecond) },
    details: {
      p99PostgresMs: samples.postgres.map((r) => r.latency.p99),
      p99SqliteMs: samples.sqlite.map((r) => r.latency.p99),
      stored,
      answered2xx: { postgres: totals.postgres.ok, sqlite: totals.sqlite.ok },
    },
    error: problems.length ? problems.join('; ') : undefined,
  });
}

/** A fleet of WebSocket clients in its own process (bench/lib/ws-clients.js). */
function startFleet(wsUrl, count) {
  return connectFleet(spawnPinned(CPU.load, process.execPath, [path.join(__dirname, 'lib', 'ws-clients.js'), wsUrl, String(count)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
}

function configFile(dir, config) {
  const file = path.join(dir, 'svc.config.json');
  fs.writeFileSync(file, JSON.stringify(config));
  return file;
}

function p99(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

/** Three instances on one new database (A, B, C), each allowing many sockets from one address. */
async function startThree(dir) {
  const database = await createDatabase();
  // Behind a proxy, or with a bench's 1,000 clients, everything comes from one address.
  const config = configFile(dir, { limits: { maxConnectionsPerAddress: 0 } });
  const instances = [];
  try {
    for (let i = 0; i < 3; i += 1) instances.push(await startSvc({ dbFile: database.url, args: ['--config', config] }));
  } catch (error) {
    await Promise.all(instances.map((svc) => svc.stop()));
    await database.drop();
    throw error;
  }
  return {
    database,
    instances,
    async stop() {
      await Promise.all(instances.map((svc) => svc.stop()));
      await database.drop();
    },
  };
}

/** Row 2. */
async function fanOut(three) {
  const [a] = three.instances;
  const wsUrl = (svc) => `${svc.url.replace(/^http/, 'ws')}/v1/images/ws`;
  const fleets = [];
  try {
    for (const svc of three.instances) fleets.push(await startFleet(wsUrl(svc), SOCKETS_PER_INSTANCE));
    log(`${fleets.length} fleets of ${SOCKETS_PER_INSTANCE} sockets connected`);
    const [onA, , onC] = fleets;
    const rounds = { c: [], a: [], fromSendC: [] };
    let sequence = 0;
    for (let round = 0; round < Math.max(3, Math.min(ROUNDS, 5)); round += 1) {
      const toC = [];
      const toA = [];
      const fromSend = [];
      for (let i = 0; i < FANOUT_SUBMISSIONS_PER_ROUND; i += 1) {
        sequence += 1;
        const sent = performance.timeOrigin + performance.now();
        const res = await fetch(`${a.url}/v1/remoteinput`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ artist: 'Fan', title: `Out ${sequence}` }) });
        const answered = performance.timeOrigin + performance.now();
        if (res.status !== 200) throw new Error(`submission answered ${res.status}`);
        const { dbid } = await res.json();
        const [lastC, lastA] = await Promise.all([onC.received(dbid), onA.received(dbid)]);
        toC.push(lastC - answered);
        toA.push(lastA - answered);
        fromSend.push(lastC - sent);
      }
      rounds.c.push(p99(toC));
      rounds.a.push(p99(toA));
      rounds.fromSendC.push(p99(fromSend));
      log(`fan-out round ${round + 1}: p99 200-on-A -> last on C ${p99(toC).toFixed(1)} ms, on A ${p99(toA).toFixed(1)} ms, send -> last on C ${p99(fromSend).toFixed(1)} ms`);
    }
    emitRow({
      row: ROW_FANOUT,
      unit: 'ms',
      svc: rounds.c,
      baseline: { label: "the same on A's own 1000 sockets", values: rounds.a },
      goal: 'p99 < 250 ms',
      details: { p99FromSendToLastOnC: rounds.fromSendC, submissionsPerRound: FANOUT_SUBMISSIONS_PER_ROUND, socketsPerInstance: SOCKETS_PER_INSTANCE },
    });
  } finally {
    for (const fleet of fleets) fleet.stop();
  }
}

/** Row 3. */
async function throughNginx(three) {
  if (!NGINX) throw new Error('nginx is not installed (Debian package nginx)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-nginx-'));
  let nginx;
  try {
    const port = await freePort();
    let config = fs.readFileSync(path.join(ROOT, 'examples', 'nginx', 'nginx.conf'), 'utf8').replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`);
    three.instances.forEach((svc, index) => {
      config = config.replaceAll(`server 127.0.0.1:${8901 + index}`, `server ${new URL(svc.url).host}`);
    });
    fs.writeFileSync(path.join(dir, 'nginx.conf'), config);
    const check = spawnSync(NGINX, ['-t', '-p', dir, '-c', 'nginx.conf'], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`nginx -t: ${check.stderr}`);
    nginx = track(spawn(NGINX, ['-p', dir, '-c', 'nginx.conf', '-g', 'daemon off;'], { stdio: 'ignore' }));
    const front = `http://127.0.0.1:${port}`;
    for (let tries = 0; ; tries += 1) {
      try {
        if ((await fetch(`${front}/v1/status`)).status === 200) break;
      } catch (error) {
        if (tries > 100) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seeded = await fetch(`${front}/v1/remoteinput`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: submissionBody({ unique: false }) });
    if (seeded.status !== 200) throw new Error(`seeding answered ${seeded.status}`);
    const get = async (url, label) => assertCleanRun(await runLoad({ url: `${url}/v1/last`, connections: CONNECTIONS, duration: DURATION }), label);
    await get(front, 'nginx warm-up');
    await get(three.instances[0].url, 'direct warm-up');
    const samples = await alternate(Math.min(ROUNDS, 3), {
      nginx: async (round) => {
        const result = await get(front, `nginx round ${round + 1}`);
        log(`round ${round + 1} through nginx ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.latency.p99} ms`);
        return result;
      },
      direct: async (round) => {
        const result = await get(three.instances[0].url, `direct round ${round + 1}`);
        log(`round ${round + 1} direct        ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.latency.p99} ms`);
        return result;
      },
    }, { minRounds: 2 });
    emitRow({
      row: ROW_NGINX,
      unit: 'req/s',
      svc: samples.nginx.map((r) => r.requestsPerSecond),
      baseline: { label: 'one instance directly, same run', values: samples.direct.map((r) => r.requestsPerSecond) },
      details: { p99NginxMs: samples.nginx.map((r) => r.latency.p99), p99DirectMs: samples.direct.map((r) => r.latency.p99) },
    });
  } finally {
    if (nginx && nginx.exitCode === null) await stopProcess(nginx);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function freePort() {
  const net = require('node:net');
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function main() {
  try {
    await submissionThroughput();
  } catch (error) {
    log(error.stack ?? String(error));
    emitFailure(ROW_SUBMIT, error, 'req/s');
    process.exitCode = 1;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-pg-'));
  let three;
  try {
    three = await startThree(dir);
  } catch (error) {
    log(error.stack ?? String(error));
    emitFailure(ROW_FANOUT, error, 'ms');
    emitFailure(ROW_NGINX, error, 'req/s');
    process.exitCode = 1;
    fs.rmSync(dir, { recursive: true, force: true });
    return;
  }
  try {
    for (const [row, unit, measure] of [[ROW_FANOUT, 'ms', fanOut], [ROW_NGINX, 'req/s', throughNginx]]) {
      try {
        await measure(three);
      } catch (error) {
        log(error.stack ?? String(error));
        emitFailure(row, error, unit);
        process.exitCode = 1;
      }
    }
  } finally {
    await three.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
