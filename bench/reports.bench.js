'use strict';
// Reports (docs/reports.md "Memory and speed"), on a busy month (bench/lib/busy-month.js: 30 days,
// 400 plays a day, 200,000 listener sessions) in a SQLite file:
//   a) the SoundExchange census file for the month, as `svc report soundexchange` makes it (the
//      check pass, then the file streamed through the format), against the same rows from one SQL
//      query written with fs.createWriteStream (goal <= 1.5);
//   b) svc's peak resident memory while writing it against its idle resident memory in the same
//      process (everything loaded, the database open) (goal <= 1.2).
// Each run is its own process (bench/lib/census-writer.js); the two files must be equal.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { seedBusyMonth } = require('./lib/busy-month');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { MiB } = require('./lib/rss');

const ROUNDS = envInt('BENCH_ROUNDS', 3);
const ROW_TIME = 'SoundExchange census file, busy month';
const ROW_RSS = 'peak RSS writing the census file / idle RSS';
const WRITER = path.join(__dirname, 'lib', 'census-writer.js');

function runWriter(mode, dbFile, outFile) {
  const output = execFileSync(process.execPath, [WRITER, mode, dbFile, outFile], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 120_000 });
  return JSON.parse(output.trim().split('\n').pop());
}

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
    if (!fs.readFileSync(outs.svc).equals(fs.readFileSync(outs.sql))) throw new Error('svc and the SQL baseline wrote different files');
    log(`svc: ${samples.svc.map((s) => `${s.ms.toFixed(0)} ms, idle ${(s.idle / MiB).toFixed(1)} MiB, peak ${(s.peak / MiB).toFixed(1)} MiB`).join('; ')}`);
    log(`sql: ${samples.sql.map((s) => `${s.ms.toFixed(0)} ms`).join('; ')} (${samples.sql[0].bytes} bytes)`);
    emitRow({
      row: ROW_TIME,
      unit: 'ms',
      svc: samples.svc.map((s) => s.ms),
      baseline: { label: 'one SQL query written with fs.createWriteStream', values: samples.sql.map((s) => s.ms) },
      goal: '<= 1.5',
    });
    emitRow({
      row: ROW_RSS,
      unit: 'MiB',
      svc: samples.svc.map((s) => s.peak / MiB),
      baseline: { label: 'idle RSS of the same process (loaded, database open)', values: samples.svc.map((s) => s.idle / MiB) },
      goal: '<= 1.2',
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
