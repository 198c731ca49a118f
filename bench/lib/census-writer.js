'use strict';
// One run of the census file for the busy month, in its own process so that its resident memory is
// its own: `node census-writer.js svc|sql DB OUT`. Prints one JSON line: milliseconds, the CPU
// milliseconds of the process over the same span (user + system: on a shared, loaded machine the
// steadier measure of the work done), idle RSS (everything loaded and the database open, before
// the first row) and peak RSS (VmHWM) at the end.
//   svc: what `svc report soundexchange` does on the server: svc's store, the report's snapshot
//        taken (snapshotReportSource), the file checked and made (prepareReport: the store's
//        summary and candidates, then its census totals), then streamed into fs.createWriteStream.
//   sql: the same rows from one SQL query (grouped and summed by SQLite), written line by line with
//        fs.createWriteStream, honouring backpressure.

const fs = require('node:fs');
const path = require('node:path');
const { once } = require('node:events');
const { Readable } = require('node:stream');
const { pipeline } = require('node:stream/promises');
const { procMemory } = require('./rss');

const ROOT = path.join(__dirname, '..', '..');
const dist = (file) => require(path.join(ROOT, 'dist', file));
const [mode, dbFile, outFile] = process.argv.slice(2);
const FROM = '2026-10-01';
const TO = '2026-10-30';
const SETTINGS = {
  service: 'KSVC',
  category: 'A',
  timeZone: 'UTC',
  minSeconds: 0,
  stationType: 'OT',
  stationFormat: '',
  soundexchange: { layout: 'e8', fileName: 'regulation' },
  contact: { name: '', street: '', city: '', phone: '', email: '' },
};

async function svcRun() {
  const { openStore } = dist('store/open-store');
  const { FORMATS } = dist('reports/formats');
  const { snapshotReportSource } = dist('reports/store-source');
  const { prepareReport } = dist('reports/run-report');
  const { reportRun } = dist('reports/report-query');
  const store = await openStore(dbFile, { maxImageBytes: 1024 * 1024 });
  const idle = procMemory(process.pid).rss;
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const run = reportRun('soundexchange', { from: FROM, to: TO }, SETTINGS, Date.now());
  const snapshot = await snapshotReportSource(store.plays)({ startMs: run.range.startMs, endMs: run.range.endMs });
  const deps = { source: snapshot.source, format: FORMATS.soundexchange, minSessionSeconds: 0 };
  try {
    const { facts, body } = await prepareReport(deps, run, () => {});
    if (facts.problems > 0) throw new Error(`${facts.problems} problems in the bench month`);
    await pipeline(Readable.from(body), fs.createWriteStream(outFile));
  } finally {
    await snapshot.release();
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const cpuMs = cpuMsSince(cpu);
  await store.close();
  return { ms, cpuMs, idle };
}

/** CPU milliseconds (user + system) of this process since `start` (a process.cpuUsage()). */
function cpuMsSince(start) {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
}

const caret = (value) => `^${String(value ?? '').replace(/[|^]/g, '')}^`;

async function sqlRun() {
  const Database = require(path.join(ROOT, 'node_modules', 'better-sqlite3'));
  const db = new Database(dbFile, { readonly: true });
  const query = db.prepare(`
    SELECT json_extract(metadata, '$.artist') AS artist, json_extract(metadata, '$.title') AS title,
           json_extract(metadata, '$.isrc') AS isrc, json_extract(metadata, '$.album') AS album,
           json_extract(metadata, '$.label') AS label, sum(json_extract(listeners, '$.atp')) AS performances,
           min(started_at) AS first
      FROM tracks WHERE kind = 'music' AND started_at >= ? AND started_at < ?
     GROUP BY coalesce(json_extract(metadata, '$.isrc'), json_extract(metadata, '$.artist') || char(0) || json_extract(metadata, '$.title'))
     ORDER BY first`);
  const idle = procMemory(process.pid).rss;
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const out = fs.createWriteStream(outFile);
  // 37 CFR 370.4(e)(8): no header, a carriage return ending each line (the bench month's names are ASCII).
  for (const row of query.iterate(`${FROM}T00:00:00.000Z`, '2026-10-31T00:00:00.000Z')) {
    const line = `${[SETTINGS.service, SETTINGS.category, row.artist, row.title, row.isrc, row.album, row.label].map(caret).join('|')}|${row.performances}\r\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const cpuMs = cpuMsSince(cpu);
  db.close();
  return { ms, cpuMs, idle };
}

(mode === 'svc' ? svcRun() : sqlRun()).then(
  ({ ms, cpuMs, idle }) => process.stdout.write(`${JSON.stringify({ ms, cpuMs, idle, peak: procMemory(process.pid).hwm, bytes: fs.statSync(outFile).size })}\n`),
  (error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exitCode = 1;
  },
);
