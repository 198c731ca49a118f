'use strict';
// Delivery promises (docs/decisions.md "Delivery promises", docs/outputs.md "Delivery"):
//   a) POST /v1/remoteinput p50 with one webhook, paced as track changes are (each after the
//      previous one's delivery arrived, then 20 ms of quiet): this build, whose track row and
//      outputs change row are one transaction, against the build before that change (git
//      BENCH_BEFORE_REF, default the commit before it, extracted and built in a temp dir),
//      alternating, same run. Goal <= 1.1.
//   b) 500 changes through three instances on one PostgreSQL database, one instance killed with
//      -9 and started again every 100 submissions: how many stored records reached a webhook,
//      first arrivals in dbid order (a count, not a time), against the records stored. Goal == 1.
// The webhook receiver runs in this process, on loopback. Each POST carries an Idempotency-Key
// and is retried on another instance when its instance dies under it.

const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const pg = require('pg');
const { startSvc, ROOT } = require('./lib/svc-process');
const { CPU, pinSelf } = require('./lib/processes');
const { assertLoopbackUrl } = require('./lib/loopback');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { median } = require('./lib/stats');

const ROUNDS = envInt('BENCH_ROUNDS', 5);
const SUBMISSIONS = envInt('BENCH_DELIVERY_SUBMISSIONS', 60);
const CHANGES = envInt('BENCH_DELIVERY_CHANGES', 500);
const KILL_EVERY = 100;
const QUIET_MS = 20;
/** The last commit whose submission wrote the track row and the change row apart. */
const BEFORE_REF = process.env.BENCH_BEFORE_REF || '24ba1e0';
const ADMIN_URL = process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const SECRET = `whsec_${Buffer.from('svc bench delivery signing secret').toString('base64')}`;
const ROW_OUTBOX = 'POST /v1/remoteinput p50 with 1 webhook, paced, track and change row in one transaction vs the build before';
const ROW_KILLS = `${CHANGES} changes through 3 PostgreSQL instances, kill -9 every ${KILL_EVERY}: delivered once, in dbid order`;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A webhook receiver: dbid of each first arrival per webhook-id, in arrival order. */
async function startReceiver() {
  const firstArrivals = [];
  const seen = new Set();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      if (!seen.has(id)) {
        seen.add(id);
        firstArrivals.push(JSON.parse(Buffer.concat(chunks).toString('utf8')).data.dbid);
      }
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/in`;
  assertLoopbackUrl(url);
  return { url, firstArrivals, close: () => new Promise((resolve) => server.close(resolve)) };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
function post(url, fields, key) {
  const body = JSON.stringify(fields);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(key ? { 'idempotency-key': key } : {}) };
    const req = http.request(`${url}/v1/remoteinput`, { method: 'POST', agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`POST answered ${res.statusCode}`));
        resolve({ ms: performance.now() - started, dbid: JSON.parse(Buffer.concat(chunks).toString('utf8')).dbid });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The build before the outbox, in a temp dir: `git archive` of BEFORE_REF, this checkout's node_modules, tsc. */
function buildBefore(dir) {
  const tree = path.join(dir, 'before');
  fs.mkdirSync(tree);
  const archive = execFileSync('git', ['-C', ROOT, 'archive', BEFORE_REF], { maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', tree], { input: archive });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'));
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(tree, 'tsconfig.json')], { stdio: 'ignore' });
  return path.join(tree, 'bin', 'svc.js');
}

async function outboxRow(dir, receiver) {
  const config = path.join(dir, 'one-webhook.json');
  fs.writeFileSync(config, JSON.stringify({ outputs: [{ name: 'hook', type: 'webhook', url: receiver.url, secret: SECRET }] }));
  log(`building ${BEFORE_REF} for the baseline`);
  const beforeBin = buildBefore(dir);
  const now = await startSvc({ args: ['--config', config] });
  const before = await startSvc({ bin: beforeBin, args: ['--config', config] });
  let sequence = 0;
  try {
    const latencyOf = (svc) => async () => {
      const times = [];
      for (let i = 0; i < SUBMISSIONS; i++) {
        const sent = await post(svc.url, { artist: 'Bench', title: `outbox ${sequence++}` });
        times.push(sent.ms);
        const arrived = receiver.firstArrivals.length;
        const deadline = Date.now() + 5000;
        while (receiver.firstArrivals.length === arrived && Date.now() < deadline) await sleep(2);
        await sleep(QUIET_MS);
      }
      return median(times);
    };
    const samples = await alternate(ROUNDS, { now: latencyOf(now), before: latencyOf(before) });
    emitRow({ row: ROW_OUTBOX, unit: 'ms', svc: samples.now, baseline: { label: `the build of ${BEFORE_REF}`, values: samples.before }, goal: '<= 1.1' });
  } finally {
    await Promise.all([now.stop(), before.stop()]);
  }
}

async function adminQuery(sql) {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** One submission, retried on the next live instance with its Idempotency-Key until it is answered. */
async function submitSomewhere(instances, fields, turn, key = crypto.randomUUID()) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const instance = instances[(turn + attempt) % instances.length];
    if (!instance.alive) continue;
    try {
      return await post(instance.svc.url, fields, key);
    } catch {
      await sleep(20);
    }
  }
  throw new Error(`${fields.title} was not answered`);
}

async function killsRow(dir, receiver) {
  const name = `svc_bench_${process.pid}_${Date.now().toString(36)}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  assertLoopbackUrl(`http://${url.host}/`);
  const config = path.join(dir, 'kills.json');
  fs.writeFileSync(config, JSON.stringify({ enrichment: { deadlineSeconds: 1 }, outputs: [{ name: 'hook', type: 'webhook', url: receiver.url, secret: SECRET }] }));
  const start = async () => ({ svc: await startSvc({ dbFile: url.toString(), args: ['--config', config] }), alive: true });
  const instances = [await start(), await start(), await start()];
  const offset = receiver.firstArrivals.length;
  try {
    for (let i = 0; i < CHANGES; i++) {
      if (i > 0 && i % KILL_EVERY === 0) {
        const victim = instances[(i / KILL_EVERY) % 3];
        // A submission on its way to it as it dies: retried elsewhere with its key, stored once.
        const key = crypto.randomUUID();
        const fields = { artist: 'Bench', title: `kill ${i}` };
        const inFlight = post(victim.svc.url, fields, key).catch(() => null);
        await sleep(1);
        victim.alive = false;
        victim.svc.child.kill('SIGKILL');
        await victim.svc.stop();
        if ((await inFlight) === null) await submitSomewhere(instances, fields, i, key);
        Object.assign(victim, await start());
      }
      await submitSomewhere(instances, { artist: 'Bench', title: `change ${i}` }, i);
    }
    const stored = (await adminQueryOn(url.toString(), 'SELECT dbid FROM tracks ORDER BY dbid')).map((row) => Number(row.dbid));
    const deadline = Date.now() + 90_000;
    while (receiver.firstArrivals.length - offset < stored.length && Date.now() < deadline) await sleep(100);
    const delivered = receiver.firstArrivals.slice(offset);
    const inOrder = delivered.filter((dbid, index) => dbid === stored[index]).length;
    log(`${stored.length} stored, ${delivered.length} delivered, ${inOrder} in dbid order`);
    emitRow({ row: ROW_KILLS, unit: 'changes', svc: [inOrder], baseline: { label: 'records stored', values: [stored.length] }, goal: '== 1' });
  } finally {
    await Promise.all(instances.map((instance) => instance.svc.stop()));
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

async function adminQueryOn(connectionString, sql) {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

async function main() {
  pinSelf(CPU.load);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-delivery-'));
  const receiver = await startReceiver();
  try {
    try {
      await outboxRow(dir, receiver);
    } catch (error) {
      emitFailure(ROW_OUTBOX, error, 'ms');
    }
    try {
      await killsRow(dir, receiver);
    } catch (error) {
      emitFailure(ROW_KILLS, error, 'changes');
    }
  } finally {
    agent.destroy();
    await receiver.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
