'use strict';
// Several instances, round two (docs/several-instances.md "Covers from memory"). Four rows:
// 1. A cover burst on PostgreSQL: 1,000 keep-alive connections (opened and warmed beforehand, as
//    overlays that poll or stream hold theirs) ask at once for a cover no instance has served
//    yet; p99 per round. svc with the in-memory image cache (images.memoryCacheBytes default)
//    against the same svc with it off (0), alternating, after one discarded burst each. Goal
//    p99 < 100 ms is printed in the details. The client is its own process on the load CPU
//    (bench/lib/burst-client.js), so parsing 1,000 replies takes no CPU from svc.
// 1b. The same burst, each fetch on a new connection: it also measures the listen backlog
//    (Node's default 511), past which the client's kernel retries a connection after 1 s.
// 2. POST /v1/remoteinput latency (median per round of 40 sequential submissions) on an
//    instance with 3,000 /v1/images/ws subscribers (own process) against one with none. Goal <= 1.5.
// 3. Connections per instance: three instances on one database under 50 concurrent submissions
//    each; the peak of svc's connections in pg_stat_activity divided by 3, against
//    database.poolSize + 1 (the bound). Goal <= 1.
// PostgreSQL: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres); each run
// creates its own database and drops it.

const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const pg = require('pg');
const { startSvc } = require('./lib/svc-process');
const { runLoad } = require('./lib/load');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { submissionLoad } = require('./lib/fixtures');
const { CPU, spawnPinned } = require('./lib/processes');
const { assertLoopbackUrl } = require('./lib/loopback');
const { connectFleet } = require('./lib/ws-fleet');

const ROUNDS = envInt('BENCH_ROUNDS', 5);
const BURST = envInt('BENCH_COVER_BURST', 1000);
const SOCKETS = envInt('BENCH_LOCAL_SOCKETS', 3000);
const WARM_UP_BURSTS = 3;
const POSTS_PER_ROUND = 40;
const POOL_SIZE = 4;
const ADMIN_URL = process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

const ROW_COVER = `cover burst on PostgreSQL: ${BURST} concurrent fetches of a new cover on warm keep-alive connections, p99 (cache on vs off)`;
// On new connections the burst also meets the listen backlog (Node's default 511): connections
// beyond it are retried by the client's kernel after 1 s (the SYN retransmission), whatever svc does.
const ROW_COVER_COLD = `cover burst on PostgreSQL: ${BURST} concurrent fetches of a new cover, each on a new connection, p99 (cache on vs off)`;
const ROW_POST = `POST /v1/remoteinput latency with ${SOCKETS} local /v1/images/ws sockets vs none (median)`;
const ROW_CONNECTIONS = 'PostgreSQL connections per instance under load (3 instances) vs database.poolSize + 1';

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

function configFile(dir, config) {
  const file = path.join(dir, `svc-${crypto.randomBytes(4).toString('hex')}.json`);
  fs.writeFileSync(file, JSON.stringify(config));
  return file;
}

function p99(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** A unique, sniffable JPEG-looking image (svc checks the magic bytes only). */
function uniqueImage(bytes = 48 * 1024) {
  const image = crypto.randomBytes(bytes);
  image.set([0xff, 0xd8, 0xff, 0xe0], 0);
  image.set([0xff, 0xd9], bytes - 2);
  return image;
}

/** A loopback server handing out the image registered under each path. */
async function startImageHost() {
  const images = new Map();
  const server = http.createServer((req, res) => {
    const image = images.get(req.url);
    if (!image) return res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': image.length }).end(image);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    add(name, image) {
      images.set(`/${name}`, image);
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

function request(url, options = {}, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, options, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function postJson(url, value, agent) {
  const body = JSON.stringify(value);
  return request(url, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, body);
}

/** The burst client (bench/lib/burst-client.js) in its own process on the load CPU; `ask` sends one command. */
async function startBurstClient() {
  const child = spawnPinned(CPU.load, process.execPath, [path.join(__dirname, 'lib', 'burst-client.js'), String(BURST)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map();
  let nextId = 0;
  await new Promise((resolve, reject) => {
    child.on('message', (message) => {
      if (message.type === 'ready') return resolve();
      const settle = pending.get(message.id);
      pending.delete(message.id);
      if (message.type === 'done') settle?.resolve(message);
      else settle?.reject(new Error(message.message));
    });
    child.once('exit', (code) => {
      reject(new Error(`burst client exited with ${code}`));
      for (const settle of pending.values()) settle.reject(new Error(`burst client exited with ${code}`));
    });
  });
  return {
    ask(command) {
      nextId += 1;
      const id = nextId;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ ...command, id });
      });
    },
    stop: () => child.send('stop'),
  };
}

/**
 * Rows 1 and 1b: each round submits a new cover, then asks for it BURST times at once: on BURST
 * warm keep-alive connections (the realistic case: overlays already hold a connection), or on
 * BURST new connections (cold: those also wait for the listen backlog, see ROW_COVER_COLD).
 */
async function coverBurst(dir, cold) {
  const database = await createDatabase();
  const host = await startImageHost();
  const base = { limits: { maxConnectionsPerAddress: 0 }, coverFetch: { allowPrivateAddresses: true } };
  const profileDir = process.env.BENCH_PROFILE === '1' ? path.join(__dirname, 'results', 'profiles', cold ? 'burst-cold' : 'burst-warm') : null;
  const cached = await startSvc({
    dbFile: database.url,
    args: ['--config', configFile(dir, base)],
    nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  });
  const uncached = await startSvc({ dbFile: database.url, args: ['--config', configFile(dir, { ...base, images: { memoryCacheBytes: 0 } })] });
  const client = await startBurstClient();
  const row = cold ? ROW_COVER_COLD : ROW_COVER;
  try {
    let round = 0;
    const burst = async (svc) => {
      round += 1;
      const name = `cover-${round}.jpg`;
      host.add(name, uniqueImage());
      // Overlays keep their connection open by polling; svc closes one idle for 5 s (Node's
      // keepAliveTimeout), so each round opens any the other instance's round let lapse.
      if (!cold) await client.ask({ type: 'warm', base: svc.url });
      const submitted = await postJson(`${svc.url}/v1/remoteinput`, { artist: 'Burst', title: `Round ${round}`, coverurl: `${host.url}/${name}` });
      const coverurl = JSON.parse(submitted.body.toString('utf8')).processed_metadata?.coverurl;
      if (!coverurl) throw new Error(`no cover stored: ${submitted.status} ${submitted.body}`);
      const result = await client.ask({ type: 'burst', base: svc.url, path: `/${coverurl}`, cold });
      if (!cold && result.reused < BURST) log(`only ${result.reused} of ${BURST} fetches went out on a warm connection`);
      const sorted = [...result.times].sort((a, b) => a - b);
      log(`  min ${sorted[0].toFixed(1)} ms, median ${median(sorted).toFixed(1)} ms, reused ${result.reused}`);
      return p99(result.times);
    };
    // A running svc has served covers before: three bursts each, discarded, so the rounds do not
    // measure V8 compiling the path (the profile shows a burst's CPU time falling over the first
    // three, then flat).
    for (let i = 0; i < WARM_UP_BURSTS; i += 1) {
      log(`warm-up burst (discarded): cache on p99 ${(await burst(cached)).toFixed(1)} ms, off ${(await burst(uncached)).toFixed(1)} ms`);
    }
    const samples = await alternate(ROUNDS, {
      svc: async (i) => {
        const value = await burst(cached);
        log(`${cold ? 'cold' : 'warm'} round ${i + 1} cache on:  p99 ${value.toFixed(1)} ms`);
        return value;
      },
      baseline: async (i) => {
        const value = await burst(uncached);
        log(`${cold ? 'cold' : 'warm'} round ${i + 1} cache off: p99 ${value.toFixed(1)} ms`);
        return value;
      },
    });
    emitRow({
      row,
      unit: 'ms',
      svc: samples.svc,
      baseline: { label: 'svc with images.memoryCacheBytes 0, same run', values: samples.baseline },
      goal: null,
      details: { goalP99Ms: 100, metP99Goal: median(samples.svc) < 100, connections: cold ? 'new' : 'warm keep-alive' },
    });
  } finally {
    client.stop();
    await cached.stop();
    await uncached.stop();
    await host.close();
    await database.drop();
  }
}

/** Row 2. */
async function postLatencyWithSockets(dir) {
  // The 3,000 sockets share one address, as behind a load balancer.
  const config = configFile(dir, { limits: { maxConnectionsPerAddress: 0 } });
  const watched = await startSvc({ args: ['--config', config] });
  const alone = await startSvc({ args: ['--config', config] });
  const wsUrl = `${watched.url.replace(/^http/, 'ws')}/v1/images/ws`;
  const fleet = await connectFleet(
    spawnPinned(CPU.load, process.execPath, [path.join(__dirname, 'lib', 'ws-clients.js'), wsUrl, String(SOCKETS)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let sequence = 0;
  try {
    log(`${SOCKETS} sockets subscribed`);
    const round = async (svc) => {
      const times = [];
      for (let i = 0; i < POSTS_PER_ROUND; i += 1) {
        sequence += 1;
        const started = performance.now();
        const res = await postJson(`${svc.url}/v1/remoteinput`, { artist: 'Latency', title: `Submission ${sequence}` }, agent);
        times.push(performance.now() - started);
        if (res.status !== 200) throw new Error(`POST answered ${res.status}`);
        if (svc === watched) await fleet.received(JSON.parse(res.body.toString('utf8')).dbid);
        else await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return { median: median(times), p99: p99(times) };
    };
    const samples = await alternate(ROUNDS, {
      svc: async (i) => {
        const result = await round(watched);
        log(`round ${i + 1} with ${SOCKETS} sockets: median ${result.median.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms`);
        return result;
      },
      baseline: async (i) => {
        const result = await round(alone);
        log(`round ${i + 1} with none:         median ${result.median.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms`);
        return result;
      },
    });
    emitRow({
      row: ROW_POST,
      unit: 'ms',
      svc: samples.svc.map((r) => r.median),
      baseline: { label: 'the same POSTs to an instance with no socket, same run', values: samples.baseline.map((r) => r.median) },
      goal: '<= 1.5',
      details: { p99WithSockets: samples.svc.map((r) => r.p99), p99Without: samples.baseline.map((r) => r.p99) },
    });
  } finally {
    agent.destroy();
    fleet.stop();
    await watched.stop();
    await alone.stop();
  }
}

/** Row 3. */
async function connectionsPerInstance(dir) {
  const database = await createDatabase();
  const config = configFile(dir, { limits: { maxConnectionsPerAddress: 0 } });
  const instances = [];
  try {
    for (let i = 0; i < 3; i += 1) instances.push(await startSvc({ dbFile: database.url, args: ['--config', config] }));
    const peaks = [];
    for (let round = 0; round < 3; round += 1) {
      let peak = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const rows = await adminQuery("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND application_name IN ('svc', 'svc listen')", [
            database.name,
          ]);
          peak = Math.max(peak, Number(rows[0].n));
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      await Promise.all(instances.map((svc) => runLoad(submissionLoad(svc.url, { connections: 50, amount: 400 }), { timeoutMs: 60_000 })));
      sampling = false;
      await sampler;
      log(`round ${round + 1}: at most ${peak} svc connections for 3 instances`);
      peaks.push(peak / instances.length);
    }
    emitRow({
      row: ROW_CONNECTIONS,
      unit: 'connections',
      svc: peaks,
      baseline: { label: `database.poolSize ${POOL_SIZE} + 1 LISTEN`, values: [POOL_SIZE + 1] },
      goal: '<= 1',
      details: { tenInstances: peaks.map((perInstance) => perInstance * 10), maxConnectionsDefault: 100 },
    });
  } finally {
    await Promise.all(instances.map((svc) => svc.stop()));
    await database.drop();
  }
}

async function main() {
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'svc-bench-instances-'));
  try {
    for (const [row, unit, run] of [
      [ROW_COVER, 'ms', () => coverBurst(dir, false)],
      [ROW_COVER_COLD, 'ms', () => coverBurst(dir, true)],
      [ROW_POST, 'ms', () => postLatencyWithSockets(dir)],
      [ROW_CONNECTIONS, 'connections', () => connectionsPerInstance(dir)],
    ]) {
      // BENCH_INSTANCES_ROWS=burst,latency runs only the rows whose name contains one of these words.
      const only = (process.env.BENCH_INSTANCES_ROWS ?? '').split(',').filter(Boolean);
      if (only.length > 0 && !only.some((word) => row.toLowerCase().includes(word))) continue;
      try {
        await run();
      } catch (error) {
        log(`${row}: ${error.stack ?? error}`);
        emitFailure(row, String(error.message ?? error), unit);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    log(error.stack ?? String(error));
    process.exit(1);
  },
);
