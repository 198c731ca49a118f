'use strict';
// Bench: /v1/images/ws fan-out (docs/streams.md). 1,000 WebSocket clients connected; time from
// sending a submission to the LAST client receiving its track frame, p50 and p99 over 50 changes
// per round, against a bare `ws` server broadcasting the same frame to 1,000 clients in the same
// run; and svc's resident memory with 1,000 clients against the same process idle. The time from
// the 200 to the last client is in the details only: svc answers first and pushes after, the
// baseline pushes before it answers, so that ratio measures the design, not the push
// (bench/audience.bench.js has the same rows at 1,000 to 10,000 clients).
//
//   npm run build && node bench/ws-fanout.bench.js
//
// Loopback only; bounded in time (about a minute, killed at 150 s); diagnostics on stderr; on
// stdout one JSON line per row. svc and the baseline run pinned to CPU 0, the client fleets
// (each its own process, so client work never loads the server) and this driver on CPU 1.
// BENCH_PIN=0 turns pinning off. Helper processes: bench/lib/ws-clients.js (a client fleet) and
// bench/lib/ws-broadcast-server.js (the baseline).

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { connectFleet } = require('./lib/ws-fleet');

const CLIENTS = Number(process.env.BENCH_WS_CLIENTS || 1000);
const CHANGES_PER_ROUND = 50;
const ROUNDS = 3;
const TIME_LIMIT_MS = 150_000;
const P99_GOAL_MS = 100;
const RSS_GOAL_MIB = 150;
const ROOT = path.resolve(__dirname, '..');
const MiB = 1024 * 1024;

const now = () => performance.timeOrigin + performance.now();
const log = (message) => process.stderr.write(`[ws-fanout] ${message}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// The driver.

const children = new Set();
let pinning;
function spawnPinned(cpu, args, options) {
  if (pinning === undefined) {
    pinning = process.env.BENCH_PIN !== '0' && os.availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  }
  const child = pinning ? spawn('taskset', ['-c', cpu, process.execPath, ...args], options) : spawn(process.execPath, args, options);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
function killChildren() {
  for (const child of children) {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

function assertLoopback(url) {
  const { hostname } = new URL(url);
  if (!/^127\.\d+\.\d+\.\d+$/.test(hostname) && hostname !== '[::1]') throw new Error(`refusing non-loopback ${url}`);
  return url;
}

function waitForListening(child, describe) {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${describe} did not start`)), 15_000);
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(assertLoopback(match[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`${describe} exited with ${code}`)));
  });
}

async function startSvc(dir) {
  const logFd = fs.openSync(path.join(dir, 'svc.stderr.log'), 'w');
  const child = spawnPinned('0', [path.join(ROOT, 'bin', 'svc.js'), 'serve', '--port', '0', '--host', '127.0.0.1', '--db', path.join(dir, 'svc.db'), '--offline'], {
    cwd: dir,
    env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SVC_'))),
    stdio: ['ignore', 'pipe', logFd],
  });
  fs.closeSync(logFd);
  return { child, url: await waitForListening(child, 'svc serve') };
}

async function startBaseline() {
  const child = spawnPinned('0', [path.join(__dirname, 'lib', 'ws-broadcast-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  return { child, url: await waitForListening(child, 'baseline ws server') };
}

/** A client fleet; resolves once all are connected. `received(dbid)` resolves with the last arrival time. */
function startFleet(wsUrl, count) {
  return connectFleet(spawnPinned('1', [path.join(__dirname, 'lib', 'ws-clients.js'), assertLoopback(wsUrl), String(count)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function post(url, body) {
  const sent = now();
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => {
        const at = now();
        if (response.statusCode !== 200) reject(new Error(`${url} answered ${response.statusCode}`));
        else resolve({ sent, at, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}

function rssBytes(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]) * 1024;
}

async function rssSamples(pid, count = 5) {
  const samples = [];
  for (let i = 0; i < count; i += 1) {
    samples.push(rssBytes(pid) / MiB);
    await sleep(200);
  }
  return samples;
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
const round2 = (value) => Math.round(value * 100) / 100;
function figure(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median = sorted.length % 2 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median: round2(median), min: round2(sorted[0]), max: round2(sorted[sorted.length - 1]) };
}

function emitRow({ row, unit, svc, baselineLabel, baseline, goal, met, details }) {
  const s = figure(svc);
  const b = figure(baseline);
  // No ratio against a zero (e.g. every client had the frame before the 200 in both).
  const ratio = b.median === 0 ? null : Math.round((s.median / b.median) * 1000) / 1000;
  process.stdout.write(JSON.stringify({ row, unit, svc: s, baseline: { label: baselineLabel, ...b }, ratio, goal, met: met(s), details }) + '\n');
}

function emitFailure(row, unit, error) {
  process.stdout.write(JSON.stringify({ row, unit, svc: null, baseline: null, ratio: null, goal: null, met: false, error: String(error && error.message ? error.message : error) }) + '\n');
}

const ROWS = {
  e2e50: `ws change p50, ${CLIENTS} clients (request sent -> last client)`,
  e2e: `ws change p99, ${CLIENTS} clients (request sent -> last client)`,
  rss: `svc resident memory with ${CLIENTS} ws clients`,
};

async function drive() {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-ws-'));
  try {
    const svc = await startSvc(dir);
    const baseline = await startBaseline();
    log(`svc ${svc.url} (pid ${svc.child.pid}), baseline ${baseline.url}, pinning ${pinning ? 'on' : 'off'}`);

    // Warm up svc with a few submissions, then read its idle memory with no client connected.
    for (let i = 0; i < 5; i += 1) await post(`${svc.url}/v1/remoteinput`, JSON.stringify({ artist: 'Warm', title: `Up ${i}` }));
    await sleep(500);
    const idleRss = await rssSamples(svc.child.pid);
    log(`svc idle RSS ${figure(idleRss).median} MiB`);

    const svcFleet = await startFleet(`${svc.url.replace('http', 'ws')}/v1/images/ws`, CLIENTS);
    const baselineFleet = await startFleet(`${baseline.url.replace('http', 'ws')}/`, CLIENTS);
    log(`${CLIENTS} clients connected to each`);

    // The baseline sends the very frame svc sends for a change, with its own dbid.
    let sampleFrame = null;
    let baselineDbid = 1_000_000;
    // Both servers send the frames before they write the 200, so the last client often has the
    // frame before the 200 arrives: "200 -> last client" is then 0 (no viewer is behind the
    // submitter). The time from sending the request to the last client is measured as well.
    const contenders = {
      async svc(i) {
        const body = JSON.stringify({ artist: 'Daft Punk', title: `One More Time ${i}`, album: 'Discovery', genre: 'House', date: '2001' });
        const { sent, at, body: result } = await post(`${svc.url}/v1/remoteinput`, body);
        sampleFrame ??= JSON.stringify({ type: 'track', dbid: result.dbid, artist: 'Daft Punk', title: `One More Time ${i}`, album: 'Discovery', track: { dbid: result.dbid, ...result.processed_metadata } });
        const last = await svcFleet.received(result.dbid);
        return { afterResponse: Math.max(0, last - at), fromRequest: last - sent };
      },
      async baseline() {
        baselineDbid += 1;
        const frame = sampleFrame.replace(/"dbid":\d+/g, `"dbid":${baselineDbid}`);
        const { sent, at } = await post(`${baseline.url}/broadcast`, frame);
        const last = await baselineFleet.received(baselineDbid);
        return { afterResponse: Math.max(0, last - at), fromRequest: last - sent };
      },
    };
    await contenders.svc(-1); // one change first, so the baseline has svc's frame to send

    const perRound = { svc: { p50: [], p99: [], e2e50: [], e2e99: [] }, baseline: { p50: [], p99: [], e2e50: [], e2e99: [] } };
    const all = { svc: { afterResponse: [], fromRequest: [] }, baseline: { afterResponse: [], fromRequest: [] } };
    for (let round = 0; round < ROUNDS; round += 1) {
      // Alternate the order per round, so machine drift hits both alike.
      const order = round % 2 === 0 ? ['svc', 'baseline'] : ['baseline', 'svc'];
      for (const name of order) {
        const samples = [];
        for (let change = 0; change < CHANGES_PER_ROUND; change += 1) {
          samples.push(await contenders[name](round * CHANGES_PER_ROUND + change));
          await sleep(20);
        }
        const afterResponse = samples.map((sample) => sample.afterResponse);
        const fromRequest = samples.map((sample) => sample.fromRequest);
        perRound[name].p50.push(percentile(afterResponse, 50));
        perRound[name].p99.push(percentile(afterResponse, 99));
        perRound[name].e2e50.push(percentile(fromRequest, 50));
        perRound[name].e2e99.push(percentile(fromRequest, 99));
        all[name].afterResponse.push(...afterResponse);
        all[name].fromRequest.push(...fromRequest);
        log(`round ${round + 1} ${name}: 200 -> last client p50 ${percentile(afterResponse, 50).toFixed(1)} ms, p99 ${percentile(afterResponse, 99).toFixed(1)} ms; request -> last client p50 ${percentile(fromRequest, 50).toFixed(1)} ms, p99 ${percentile(fromRequest, 99).toFixed(1)} ms`);
      }
    }
    const connectedRss = await rssSamples(svc.child.pid);
    log(`svc RSS with ${CLIENTS} clients ${figure(connectedRss).median} MiB`);

    const details = (name) => ({
      rounds: ROUNDS,
      changes_per_round: CHANGES_PER_ROUND,
      clients: CLIENTS,
      after_response_p50_all: round2(percentile(all[name].afterResponse, 50)),
      after_response_p99_all: round2(percentile(all[name].afterResponse, 99)),
      request_to_last_client_p50_all: round2(percentile(all[name].fromRequest, 50)),
      request_to_last_client_p99_all: round2(percentile(all[name].fromRequest, 99)),
    });
    const fanOut = (row, key, goal, met) =>
      emitRow({
        row,
        unit: 'ms',
        svc: perRound.svc[key],
        baselineLabel: `bare ws server, same frame, ${CLIENTS} clients`,
        baseline: perRound.baseline[key],
        goal,
        met,
        details: { svc: details('svc'), baseline: details('baseline') },
      });
    fanOut(ROWS.e2e50, 'e2e50', null, () => null);
    fanOut(ROWS.e2e, 'e2e99', `p99 < ${P99_GOAL_MS} ms`, (s) => s.max < P99_GOAL_MS);
    emitRow({
      row: ROWS.rss,
      unit: 'MiB',
      svc: connectedRss,
      baselineLabel: 'the same svc process idle, 0 clients',
      baseline: idleRss,
      goal: `< ${RSS_GOAL_MIB} MiB resident`,
      met: (s) => s.max < RSS_GOAL_MIB,
    });

    svcFleet.stop();
    baselineFleet.stop();
  } finally {
    killChildren();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Bounded in time: past TIME_LIMIT_MS every row is reported as failed and the children are killed. */
function main() {
  process.once('exit', killChildren);
  const watchdog = setTimeout(() => {
    log(`time limit of ${TIME_LIMIT_MS / 1000} s reached`);
    for (const row of Object.values(ROWS)) emitFailure(row, '', 'time limit reached');
    killChildren();
    process.exit(1);
  }, TIME_LIMIT_MS);
  drive().then(
    () => {
      clearTimeout(watchdog);
      process.exit(0);
    },
    (error) => {
      log(`failed: ${error.stack || error.message}`);
      for (const row of Object.values(ROWS)) emitFailure(row, '', error);
      killChildren();
      process.exit(1);
    },
  );
}

main();
