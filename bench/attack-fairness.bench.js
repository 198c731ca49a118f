'use strict';
// docs/limits-and-load.md rows: fairness under three floods, measured on this build ("after")
// and, when BENCH_BEFORE_ROOT names a built checkout of the code before it (e.g. main before
// the change), on that one too ("before", the baseline column):
//   - history flood: 100 clients reading GET /v1/history?limit=1000 (in their own process, pinned
//     to the load CPU); figure: /v1/last p99 (ms)
//   - fat records: 600 submissions of a 1 MB list, then four 250-row pages; figure: peak RSS (MiB)
//   - slow headers: 12,000 connections (BENCH_SLOW_CONNECTIONS) from 30 loopback addresses that
//     never finish their head, in their own process on the load CPU: more than limits.maxConnections
//     (10,000), each address under limits.maxConnectionsPerAddress (512), as a flood from many
//     addresses is; figure: /v1/status probes from a fresh connection answered within 1 s (%)
// Goals: p99 < 100 ms; RSS < 300 MiB; 100 % answered.

const http = require('node:http');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { startSvc } = require('./lib/svc-process');
const { CPU, spawnPinned } = require('./lib/processes');
const { emitRow, emitFailure, log, envInt } = require('./lib/report');
const { procMemory, MiB } = require('./lib/rss');

const SECONDS = envInt('BENCH_ATTACK_SECONDS', 10);
// Past limits.maxConnections (10,000), where a slot held by a head that never ends must be given
// up for a fresh client; the test suite's own check uses 2,000.
const SLOW_CONNECTIONS = envInt('BENCH_SLOW_CONNECTIONS', 12_000);
const SLOW_ADDRESSES = 30;
const BEFORE = process.env.BENCH_BEFORE_ROOT ? path.join(process.env.BENCH_BEFORE_ROOT, 'bin', 'svc.js') : null;

async function timed(url, timeoutMs = 10_000) {
  const started = performance.now();
  const ok = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).then(
    async (res) => (await res.arrayBuffer(), res.status === 200),
    () => false,
  );
  return { ok, ms: performance.now() - started };
}

async function seed(url, count, body) {
  for (let sent = 0; sent < count; sent += 4) {
    await Promise.all(
      [0, 1, 2, 3].map((i) =>
        fetch(`${url}/v1/remoteinput`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ ...body, title: `T${sent + i}` }),
        }).then((res) => res.arrayBuffer()),
      ),
    );
  }
}

async function historyFlood(bin) {
  const svc = await startSvc({ bin });
  try {
    await seed(svc.url, 1000, { artist: 'A', artistlongbio: 'A long artist biography. '.repeat(160) });
    const until = Date.now() + SECONDS * 1000;
    // The readers run in their own process on the load CPU (bench/lib/history-readers.js).
    const readers = spawnPinned(CPU.load, process.execPath, [path.join(__dirname, 'lib', 'history-readers.js'), svc.url, '100', String(SECONDS)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let readerReport = '';
    readers.stdout.on('data', (chunk) => (readerReport += chunk));
    const readersDone = new Promise((resolve) => readers.on('close', resolve));
    const latencies = [];
    while (Date.now() < until) {
      const { ms } = await timed(`${svc.url}/v1/last`, 60_000);
      latencies.push(ms);
      await sleep(50);
    }
    await readersDone;
    log(`history flood readers: ${readerReport.trim()}`);
    latencies.sort((a, b) => a - b);
    return latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))];
  } finally {
    await svc.stop();
  }
}

async function fatRecords(bin) {
  const svc = await startSvc({ bin });
  let peak = procMemory(svc.pid).rss;
  const sampler = setInterval(() => (peak = Math.max(peak, procMemory(svc.pid).rss)), 100);
  try {
    const genres = Array.from({ length: 1000 }, () => 'x'.repeat(1000));
    await seed(svc.url, 600, { artist: 'Fat', genres });
    await Promise.all([0, 1, 2, 3].map(() => timed(`${svc.url}/v1/history?limit=250`, 120_000)));
    return peak / MiB;
  } finally {
    clearInterval(sampler);
    await svc.stop();
  }
}

/** GET /v1/status on a connection of its own, as a new client would: true when a 200 came within 1 s. */
function freshStatus(url) {
  return new Promise((resolve) => {
    let ok = false;
    const request = http.get(`${url}/v1/status`, { agent: false, headers: { connection: 'close' } }, (response) => {
      response.resume();
      response.on('end', () => (ok = response.statusCode === 200));
    });
    // Cut at 1 s wherever it is (connecting, waiting, mid-body); 'close' comes in every case.
    const timer = setTimeout(() => request.destroy(), 1000);
    request.on('error', () => undefined);
    request.on('close', () => {
      clearTimeout(timer);
      resolve(ok);
    });
  });
}

async function slowHeaders(bin) {
  const svc = await startSvc({ bin });
  const attacker = spawnPinned(CPU.load, process.execPath, [path.join(__dirname, 'lib', 'slow-headers.js'), svc.url, String(SLOW_CONNECTIONS), String(SLOW_ADDRESSES)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const ready = await new Promise((resolve, reject) => {
      attacker.stdout.once('data', (chunk) => resolve(JSON.parse(String(chunk)).ready));
      attacker.once('exit', (code) => reject(new Error(`the slow-header process exited with ${code}`)));
    });
    log(`slow headers: ${ready} of ${SLOW_CONNECTIONS} connections open`);
    let answered = 0;
    let probes = 0;
    const until = Date.now() + SECONDS * 1000;
    while (Date.now() < until) {
      probes += 1;
      if (await freshStatus(svc.url)) answered += 1;
      await sleep(200);
    }
    return (100 * answered) / probes;
  } finally {
    attacker.kill('SIGTERM');
    await new Promise((resolve) => (attacker.exitCode === null ? attacker.once('exit', resolve) : resolve()));
    await svc.stop();
  }
}

async function main() {
  const rows = [
    ['history flood: /v1/last p99 under 100 limit=1000 readers', 'ms', historyFlood, 'svc < 100 ms'],
    ['fat records: peak RSS, 600 x 1 MB list + four 250-row pages', 'MiB', fatRecords, 'svc < 300 MiB'],
    [`slow headers: /v1/status answered within 1 s under ${SLOW_CONNECTIONS} connections`, '%', slowHeaders, 'svc >= 100 percent'],
  ];
  for (const [row, unit, measure, goal] of rows.filter(([name]) => !process.env.BENCH_ATTACK_ONLY || name.includes(process.env.BENCH_ATTACK_ONLY))) {
    try {
      const after = await measure(undefined);
      const before = BEFORE ? await measure(BEFORE) : after;
      log(`${row}: after ${after.toFixed(1)} ${unit}, before ${BEFORE ? before.toFixed(1) : 'not measured'} ${unit}`);
      emitRow({
        row,
        unit,
        svc: [Math.round(after * 10) / 10],
        baseline: { label: BEFORE ? 'before (BENCH_BEFORE_ROOT)' : 'after (no before build given)', values: [Math.round(before * 10) / 10] },
        goal,
      });
    } catch (error) {
      emitFailure(row, error, unit);
      process.exitCode = 1;
    }
  }
}

main().catch((error) => {
  log(error.stack ?? String(error));
  process.exitCode = 1;
});
