'use strict';
// Behind a proxy and a pooler (docs/several-instances.md "Resuming streams", "PgBouncer"). Two rows:
// 1. Cross-instance push through nginx: 1,000 /v1/events readers of instance B through nginx
//    (examples/nginx/nginx.conf with B behind it) against 1,000 connected to B directly (each
//    fleet its own process on the load CPU, one fleet at a time, alternating); a submission to
//    instance A; the time from sending it to the fleet's last reader's event, p99 over 30 changes
//    per round. Goal: ratio <= 1.3.
// 2. PostgreSQL connections of 10 instances through Debian's PgBouncer (transaction mode,
//    default_pool_size 10, database.listenUrl direct) under 20 concurrent submissions each: the
//    peak of pg_stat_activity for the database; baseline the same ten instances connected
//    directly. Goal: <= 25.
// 3. Replays paced (docs/several-instances.md "Resuming streams"): GET /v1/last p99 (one request
//    every 10 ms) while 300 /v1/events readers (their own process, bench/lib/sse-catch-up.js) come
//    back at once having missed the same 300 records, until every one has them; against the same
//    readers coming back with nothing missed (what 300 reconnections cost without replays),
//    alternating. SQLite. Goal: p99 < 100 ms.
// 4. Cheap requests while large replays go out (issue 50 item 1; docs/several-instances.md
//    "Resuming streams"): GET /v1/last and GET /v1/status in turn, each on a new connection from
//    an address no reader uses, every 50 ms, while 200 /v1/events readers come back at once having
//    missed the same 50 records of about 60 KB each (600 MB to send), until every one has them;
//    against the same readers coming back with nothing missed, alternating. SQLite. Goal: median
//    <= 500 ms (a probe unanswered after 10 s counts as 10 s).
// PostgreSQL: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres); each row
// creates its own database and drops it. nginx and pgbouncer: the Debian packages.

const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { spawn, spawnSync } = require('node:child_process');
const pg = require('pg');
const { startSvc, ROOT } = require('./lib/svc-process');
const { CPU, spawnPinned, stopProcess, track } = require('./lib/processes');
const { connectFleet } = require('./lib/ws-fleet');
const { assertLoopbackUrl } = require('./lib/loopback');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');

const READERS = envInt('BENCH_SSE_CLIENTS', 1000);
const ROUNDS = envInt('BENCH_ROUNDS', 3);
const CHANGES_PER_ROUND = 30;
const INSTANCES = 10;
const BOUNCER_POOL = 10;
const ADMIN_URL = process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((file) => fs.existsSync(file));
const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((file) => fs.existsSync(file));

const ROW_PUSH = `cross-instance push to ${READERS} /v1/events readers through nginx vs direct, p99 to the last reader`;
const CATCH_UP_READERS = envInt('BENCH_CATCH_UP_READERS', 300);
const MISSED = 300;
const ROW_CATCH_UP = `GET /v1/last p99 while ${CATCH_UP_READERS} /v1/events readers catch up ${MISSED} missed records each`;
const LARGE_READERS = envInt('BENCH_LARGE_CATCH_UP_READERS', 200);
const LARGE_MISSED = 50;
/** Custom fields of 1,000 characters (limits.maxFieldLength) per large record: about 58 KB of JSON, under limits.maxRecordBytes (64 KiB). */
const LARGE_FIELDS = 57;
const FRESH_PROBE_EVERY_MS = 50;
const FRESH_PROBE_TIMEOUT_MS = 10_000;
/** The probes' own address: none of bench/lib/sse-catch-up.js's readers (127.0.0.1 to .4) uses it. */
const FRESH_ADDRESS = '127.0.0.9';
const ROW_LARGE_CATCH_UP = `GET /v1/last and /v1/status from a fresh address, median, while ${LARGE_READERS} /v1/events readers catch up ${LARGE_MISSED} records of ~60 KB each`;
const ROW_POOL = `PostgreSQL connections of ${INSTANCES} instances through PgBouncer (transaction mode, listenUrl direct) vs direct`;

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function adminQuery(sql, values = []) {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows;
  } finally {
    await client.end();
  }
}

async function createDatabase() {
  const name = `svc_bench_${process.pid}_${Date.now().toString(36)}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  assertLoopbackUrl(`http://${url.host}/`);
  return { url: url.toString(), name, drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function submit(url, title, extra = {}) {
  const sent = now();
  const answer = await fetch(`${url}/v1/remoteinput`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ artist: 'Bench', title, ...extra }) });
  if (answer.status !== 200) throw new Error(`${url} answered ${answer.status}`);
  return { sent, dbid: (await answer.json()).dbid };
}

function configFile(dir, config) {
  const file = path.join(dir, `svc-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(file, JSON.stringify(config));
  return file;
}

/** nginx from examples/nginx/nginx.conf with `backend` as its only upstream. */
async function startNginx(dir, backend) {
  const port = await freePort();
  let config = fs.readFileSync(path.join(ROOT, 'examples', 'nginx', 'nginx.conf'), 'utf8').replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`);
  config = config.replaceAll('server 127.0.0.1:8901', `server ${backend}`).replace(/^\s*server 127\.0\.0\.1:890[23].*$/gm, '');
  fs.writeFileSync(path.join(dir, 'nginx.conf'), config);
  fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true });
  const check = spawnSync(NGINX, ['-t', '-p', dir, '-c', 'nginx.conf'], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`nginx -t: ${check.stderr}`);
  const nginx = track(spawnPinned(CPU.server, NGINX, ['-p', dir, '-c', 'nginx.conf', '-g', 'daemon off;'], { stdio: 'ignore' }));
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries += 1) {
    const status = await fetch(`${url}/v1/status`).then((answer) => answer.status, () => 0);
    if (status === 200) return { url, process: nginx };
    if (tries > 100) throw new Error(`nginx answered ${status} for /v1/status`);
    await sleep(50);
  }
}

function readerFleet(url) {
  return connectFleet(spawnPinned(CPU.load, process.execPath, [path.join(__dirname, 'lib', 'sse-clients.js'), `${url}/v1/events`, String(READERS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
}

/** Row 1. */
async function pushThroughNginx() {
  if (!NGINX) throw new Error('nginx is not installed (Debian package nginx)');
  const database = await createDatabase();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-proxies-'));
  const started = [];
  const fleets = [];
  let nginx;
  try {
    // trustProxy: nginx's 1,000 connections come from one address, which the per-address cap then leaves alone.
    const args = ['--config', configFile(dir, { trustProxy: ['127.0.0.1'] })];
    const a = await startSvc({ dbFile: database.url, args });
    started.push(a);
    const b = await startSvc({ dbFile: database.url, args });
    started.push(b);
    nginx = await startNginx(dir, new URL(b.url).host);
    await submit(a.url, 'Seed');
    log(`${READERS} readers on instance B, through nginx or direct, in turns; submissions to instance A`);
    const measure = async (url, label, round) => {
      const fleet = await readerFleet(url);
      fleets.push(fleet);
      const latencies = [];
      for (let change = 0; change < CHANGES_PER_ROUND; change += 1) {
        const { sent, dbid } = await submit(a.url, `Round ${round} ${label} change ${change}`);
        latencies.push((await fleet.received(dbid)) - sent);
      }
      if (fleet.child.connected) fleet.stop();
      const value = percentile(latencies, 99);
      log(`round ${round + 1} ${label}: p99 ${value.toFixed(1)} ms`);
      // B sees the fleet's sockets close before the next fleet connects.
      await sleep(1000);
      return value;
    };
    const p99 = await alternate(ROUNDS, { nginx: (round) => measure(nginx.url, 'through nginx', round), direct: (round) => measure(b.url, 'direct', round) }, { minRounds: 2 });
    emitRow({ row: ROW_PUSH, unit: 'ms', svc: p99.nginx, baseline: { label: 'the same changes to readers connected directly', values: p99.direct }, goal: '<= 1.3' });
  } finally {
    for (const fleet of fleets) if (fleet.child.connected) fleet.stop();
    if (nginx && nginx.process.exitCode === null) await stopProcess(nginx.process);
    await Promise.all(started.map((svc) => svc.stop()));
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Debian's pgbouncer on its own ini file and port (test/helpers/pgbouncer.ts does the same for the tests). */
async function startPgBouncer(dir, database) {
  const admin = new URL(ADMIN_URL);
  const port = await freePort();
  fs.chmodSync(dir, 0o755);
  const authFile = path.join(dir, 'users.txt');
  fs.writeFileSync(authFile, `"${decodeURIComponent(admin.username || 'postgres')}" ""\n`, { mode: 0o644 });
  const ini = [
    '[databases]',
    `${database.name} = host=${admin.hostname} port=${admin.port || '5432'} dbname=${database.name}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    "unix_socket_dir = ''",
    'auth_type = trust',
    `auth_file = ${authFile}`,
    'pool_mode = transaction',
    `default_pool_size = ${BOUNCER_POOL}`,
    'max_client_conn = 1000',
    'ignore_startup_parameters = extra_float_digits',
    ...(process.getuid?.() === 0 ? ['user = postgres'] : []),
  ].join('\n');
  const iniFile = path.join(dir, 'pgbouncer.ini');
  fs.writeFileSync(iniFile, `${ini}\n`, { mode: 0o644 });
  const child = track(spawn(PGBOUNCER, [iniFile], { stdio: 'ignore' }));
  for (let tries = 0; ; tries += 1) {
    const open = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) break;
    if (tries > 100 || child.exitCode !== null) throw new Error('pgbouncer did not start');
    await sleep(50);
  }
  const url = new URL(ADMIN_URL);
  url.port = String(port);
  url.pathname = `/${database.name}`;
  return { url: url.toString(), process: child };
}

/** Ten instances on `config`, 20 concurrent submissions each, sampling the database's connections; answers the peak. */
async function peakConnections(database, dir, config, label) {
  const instances = [];
  try {
    const args = ['--config', configFile(dir, config)];
    // `--db` (what startSvc passes) wins over the config file: it carries database.location.
    const location = config.database?.location ?? database.url;
    instances.push(...(await Promise.all(Array.from({ length: INSTANCES }, () => startSvc({ dbFile: location, args })))));
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const rows = await adminQuery('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database.name]);
        peak = Math.max(peak, Number(rows[0].n));
        await sleep(20);
      }
    })();
    await Promise.all(instances.flatMap((svc, i) => Array.from({ length: 20 }, (_, j) => submit(svc.url, `${label} ${i}.${j}`))));
    sampling = false;
    await sampler;
    log(`${label}: at most ${peak} PostgreSQL connections for ${INSTANCES} instances`);
    return peak;
  } finally {
    await Promise.all(instances.map((svc) => svc.stop()));
  }
}

/** Row 2. */
async function connectionsThroughPgBouncer() {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed (Debian package pgbouncer)');
  const database = await createDatabase();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-pgbouncer-'));
  let bouncer;
  try {
    bouncer = await startPgBouncer(dir, database);
    const pooled = await peakConnections(database, dir, { database: { location: bouncer.url, listenUrl: database.url } }, 'through PgBouncer');
    // PgBouncer keeps its idle server connections: stopped first, so they are not counted again.
    await stopProcess(bouncer.process);
    const direct = await peakConnections(database, dir, {}, 'direct');
    emitRow({ row: ROW_POOL, unit: 'connections', svc: [pooled], baseline: { label: `the same ${INSTANCES} instances connected directly (poolSize 4 + 1 each)`, values: [direct] }, goal: '<= 25 connections' });
  } finally {
    if (bouncer && bouncer.process.exitCode === null) await stopProcess(bouncer.process);
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** GET /v1/last every 10 ms until `stop()` says so; answers each latency in ms. */
async function probeLast(url, stop) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = [];
  while (!stop()) {
    const sent = now();
    await new Promise((resolve, reject) => {
      http.get(`${url}/v1/last`, { agent }, (response) => response.resume().on('end', resolve)).on('error', reject);
    });
    latencies.push(now() - sent);
    await sleep(10);
  }
  agent.destroy();
  return latencies;
}

/**
 * GET /v1/last and /v1/status in turn, each on a new connection from FRESH_ADDRESS, one sent every
 * FRESH_PROBE_EVERY_MS whether or not the ones before were answered (a stall then shows in every
 * probe sent during it, not in one), until `stop()`; each latency in ms, in the order sent (a
 * probe unanswered after FRESH_PROBE_TIMEOUT_MS counts as that long).
 */
async function probeFresh(url, stop) {
  const probes = [];
  for (let index = 0; !stop(); index += 1) {
    const sent = now();
    probes.push(
      new Promise((resolve) => {
        const settle = () => resolve(Math.min(FRESH_PROBE_TIMEOUT_MS, now() - sent));
        const request = http.get(`${url}${index % 2 === 0 ? '/v1/last' : '/v1/status'}`, { agent: false, localAddress: FRESH_ADDRESS }, (response) => response.resume().on('end', settle));
        request.setTimeout(FRESH_PROBE_TIMEOUT_MS, () => request.destroy());
        request.on('error', settle);
      }),
    );
    await sleep(FRESH_PROBE_EVERY_MS);
  }
  return Promise.all(probes);
}

/** The readers of bench/lib/sse-catch-up.js coming back with Last-Event-ID `since`; `probe` runs until every one has `until`. */
async function probeWhileReaders(svc, since, until, { readers = CATCH_UP_READERS, probe = probeLast } = {}) {
  const client = spawnPinned(CPU.load, process.execPath, [path.join(__dirname, 'lib', 'sse-catch-up.js'), `${svc.url}/v1/events`, String(readers), String(since), String(until)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let done;
  let failed;
  client.on('message', (message) => {
    if (message.type === 'done') done = message;
  });
  client.once('exit', (code) => {
    if (!done) failed = new Error(`catch-up client exited with ${code}`);
  });
  try {
    const latencies = await probe(svc.url, () => done !== undefined || failed !== undefined);
    if (failed) throw failed;
    return { p99: percentile(latencies, 99), median: percentile(latencies, 50), ms: done.ms, refusals: done.refusals, probes: latencies.length, latencies };
  } finally {
    if (client.connected) client.send('stop');
    // The readers' sockets close before the next fleet connects.
    await sleep(1000);
  }
}

/** Row 3. */
async function lastWhileCatchingUp() {
  const svc = await startSvc();
  try {
    const since = (await submit(svc.url, 'Seen')).dbid;
    let until = since;
    for (let index = 0; index < MISSED; index += 1) until = (await submit(svc.url, `Missed ${index}`)).dbid;
    const samples = await alternate(ROUNDS, {
      catchUp: async (round) => {
        const result = await probeWhileReaders(svc, since, until);
        log(`round ${round + 1}: ${CATCH_UP_READERS} readers caught up ${MISSED} records each in ${result.ms} ms (${result.refusals} answers 503, retried); /v1/last p99 ${result.p99.toFixed(1)} ms`);
        return result;
      },
      current: async (round) => {
        const result = await probeWhileReaders(svc, until, until);
        log(`round ${round + 1}: ${CATCH_UP_READERS} readers with nothing missed connected in ${result.ms} ms; /v1/last p99 ${result.p99.toFixed(1)} ms`);
        return result;
      },
    }, { minRounds: 2 });
    emitRow({
      row: ROW_CATCH_UP,
      unit: 'ms',
      svc: samples.catchUp.map((result) => result.p99),
      baseline: { label: 'the same readers reconnecting with nothing missed', values: samples.current.map((result) => result.p99) },
      goal: 'p99 < 100 ms',
      details: { catchUpMs: samples.catchUp.map((result) => result.ms), refusals: samples.catchUp.map((result) => result.refusals) },
    });
  } finally {
    await svc.stop();
  }
}

/** Row 4. */
async function freshWhileLargeCatchUp() {
  const svc = await startSvc();
  try {
    const since = (await submit(svc.url, 'Seen')).dbid;
    const large = Object.fromEntries(Array.from({ length: LARGE_FIELDS }, (_, index) => [`note${index}`, 'x'.repeat(1000)]));
    let until = since;
    for (let index = 0; index < LARGE_MISSED; index += 1) until = (await submit(svc.url, `Missed ${index}`, large)).dbid;
    const recordBytes = (await (await fetch(`${svc.url}/v1/last`)).text()).length;
    log(`${LARGE_MISSED} records of ${recordBytes} bytes each as /v1/last answers them: ${((LARGE_READERS * LARGE_MISSED * recordBytes) / 1e6).toFixed(0)} MB to replay per round`);
    const options = { readers: LARGE_READERS, probe: probeFresh };
    const samples = await alternate(ROUNDS, {
      catchUp: async (round) => {
        const result = await probeWhileReaders(svc, since, until, options);
        log(`round ${round + 1}: ${LARGE_READERS} readers caught up ${LARGE_MISSED} large records each in ${result.ms} ms; fresh /v1/last, /v1/status median ${result.median.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms over ${result.probes} (over 1 s: ${result.latencies.filter((ms) => ms > 1000).length})`);
        return result;
      },
      current: async (round) => {
        const result = await probeWhileReaders(svc, until, until, options);
        log(`round ${round + 1}: ${LARGE_READERS} readers with nothing missed connected in ${result.ms} ms; fresh median ${result.median.toFixed(1)} ms`);
        return result;
      },
    }, { minRounds: 2 });
    emitRow({
      row: ROW_LARGE_CATCH_UP,
      unit: 'ms',
      svc: samples.catchUp.map((result) => result.median),
      baseline: { label: 'the same readers reconnecting with nothing missed', values: samples.current.map((result) => result.median) },
      goal: 'median <= 500 ms',
      details: { p99: samples.catchUp.map((result) => result.p99), catchUpMs: samples.catchUp.map((result) => result.ms), probes: samples.catchUp.map((result) => result.probes), recordBytes },
    });
  } finally {
    await svc.stop();
  }
}

async function main() {
  const only = process.env.BENCH_PROXIES_ROWS ? process.env.BENCH_PROXIES_ROWS.split(',').map(Number) : undefined;
  const rows = [
    [ROW_PUSH, pushThroughNginx, 'ms'],
    [ROW_CATCH_UP, lastWhileCatchingUp, 'ms'],
    [ROW_LARGE_CATCH_UP, freshWhileLargeCatchUp, 'ms'],
    [ROW_POOL, connectionsThroughPgBouncer, 'connections'],
  ];
  for (const [index, [row, measure, unit]] of rows.entries()) {
    if (only && !only.includes(index + 1)) continue;
    try {
      await measure();
    } catch (error) {
      log(error.stack ?? String(error));
      emitFailure(row, error, unit);
      process.exitCode = 1;
    }
  }
}

main();
