'use strict';
// Reports (docs/reports.md "Memory and speed"), on a busy month (bench/lib/busy-month.js: 30 days,
// 400 plays a day, 200,000 listener sessions) in a SQLite file:
//   a) the SoundExchange census file for the month, as `svc report soundexchange` makes it (the
//      check pass, then the file streamed through the format), against the same rows from one SQL
//      query written with fs.createWriteStream (goal <= 1.5);
//   b) the peak resident memory of a running `svc serve` while it answers
//      GET /v1/reports/soundexchange for that month, against its idle resident memory just before
//      (goal <= 1.2): the process a station's report is made in, its heap as a started server
//      has it. The peak is VmHWM, started again from the idle size before the request. Its
//      details give the same ratio for the writer process of a).
// Each run of a) is its own process (bench/lib/census-writer.js); the files must all be equal.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { seedBusyMonth } = require('./lib/busy-month');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { MiB, procMemory, resetPeak } = require('./lib/rss');
const { startSvc } = require('./lib/svc-process');

const ROUNDS = envInt('BENCH_ROUNDS', 3);
const ROW_TIME = 'SoundExchange census file, busy month';
const ROW_RSS = 'peak RSS of svc serve answering the census file / its idle RSS';
const WRITER = path.join(__dirname, 'lib', 'census-writer.js');

function runWriter(mode, dbFile, outFile) {
  const output = execFileSync(process.execPath, [WRITER, mode, dbFile, outFile], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 120_000 });
  return JSON.parse(output.trim().split('\n').pop());
}

const SECRET = 'bench-reports';
const SETTLE_MS = 2000;

/** One round of b): a fresh `svc serve` on the server's copy of the month, idle, then one census file over HTTP. */
async function serverRound(config, dbFile, outFile) {
  const svc = await startSvc({ args: ['--config', config], dbFile });
  try {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    resetPeak(svc.pid);
    const idle = procMemory(svc.pid).rss;
    const response = await fetch(`${svc.url}/v1/reports/soundexchange?from=2026-10-01&to=2026-10-30`, { headers: { 'X-SVC-Client-Auth': SECRET } });
    if (response.status !== 200) throw new Error(`GET /v1/reports/soundexchange answered ${response.status}: ${await response.text()}`);
    fs.writeFileSync(outFile, Buffer.from(await response.arrayBuffer()));
    return { idle, peak: procMemory(svc.pid).hwm };
  } finally {
    await svc.stop();
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const cpuRatio = (samples) => Math.round((median(samples.svc.map((s) => s.cpuMs)) / median(samples.sql.map((s) => s.cpuMs))) * 100) / 100;

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-reports-'));
  try {
    const dbFile = path.join(dir, 'month.db');
    const seeded = seedBusyMonth(dbFile);
    log(`seeded ${seeded.plays} plays (${seeded.recordings} recordings) and ${seeded.sessions} sessions`);
    const outs = { svc: path.join(dir, 'svc.txt'), sql: path.join(dir, 'sql.txt') };
    const samples = await alternate(ROUNDS, {
      svc: () => runWriter('svc', dbFile, outs.svc),
      sql: () => runWriter('sql', dbFile, outs.sql),
    });
    // The server gets its own copy (it opens the file for writing); reports leave it as it was.
    const serverDb = path.join(dir, 'server.db');
    fs.copyFileSync(dbFile, serverDb);
    const config = path.join(dir, 'server.json');
    fs.writeFileSync(config, JSON.stringify({ secret: SECRET, reports: { service: 'KSVC', category: 'A', timeZone: 'UTC' } }));
    const served = [];
    for (let round = 0; round < ROUNDS; round++) served.push(await serverRound(config, serverDb, path.join(dir, 'served.txt')));
    if (!fs.readFileSync(outs.svc).equals(fs.readFileSync(outs.sql))) throw new Error('svc and the SQL baseline wrote different files');
    if (!fs.readFileSync(path.join(dir, 'served.txt')).equals(fs.readFileSync(outs.sql))) throw new Error('the server and the SQL baseline wrote different files');
    log(`svc: ${samples.svc.map((s) => `${s.ms.toFixed(0)} ms, idle ${(s.idle / MiB).toFixed(1)} MiB, peak ${(s.peak / MiB).toFixed(1)} MiB`).join('; ')}`);
    log(`sql: ${samples.sql.map((s) => `${s.ms.toFixed(0)} ms`).join('; ')} (${samples.sql[0].bytes} bytes)`);
    log(`CPU ms, svc: ${samples.svc.map((s) => s.cpuMs.toFixed(0)).join('; ')}; sql: ${samples.sql.map((s) => s.cpuMs.toFixed(0)).join('; ')}`);
    log(`svc serve: ${served.map((s) => `idle ${(s.idle / MiB).toFixed(1)} MiB, peak ${(s.peak / MiB).toFixed(1)} MiB`).join('; ')}`);
    emitRow({
      row: ROW_TIME,
      unit: 'ms',
      svc: samples.svc.map((s) => s.ms),
      baseline: { label: 'one SQL query written with fs.createWriteStream', values: samples.sql.map((s) => s.ms) },
      goal: '<= 1.5',
      // The processes' CPU time over the same spans: the work done, less moved by a loaded machine than the wall clock.
      details: { cpuMs: { svc: samples.svc.map((s) => Math.round(s.cpuMs)), sql: samples.sql.map((s) => Math.round(s.cpuMs)) }, cpuRatioOfMedians: cpuRatio(samples) },
    });
    const ratio = (list) => list.map((s) => Math.round((s.peak / s.idle) * 1000) / 1000);
    emitRow({
      row: ROW_RSS,
      unit: 'MiB',
      svc: served.map((s) => s.peak / MiB),
      baseline: { label: 'idle RSS of the same svc serve, just before the request', values: served.map((s) => s.idle / MiB) },
      goal: '<= 1.2',
      details: { writerProcessPeakOverIdle: ratio(samples.svc) },
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  log(error.stack ?? String(error));
  emitFailure(ROW_TIME, error, 'ms');
  process.exitCode = 1;
});
