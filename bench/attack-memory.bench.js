'use strict';
// Hostile clients (docs/security.md): resident memory (VmRSS) of svc under three resource
// attacks, each for 20 s against a fresh idle server, compared with that server's own idle RSS:
//   - 60 connections pipelining GET /v1/status without reading the answers
//   - 50 connections asking 8 times each for a 9.9 MB cover and never reading
//   - 5,000 slowloris connections (one header byte every 5 s), from 10 loopback addresses
//   - 100 /v1/events readers from one address replaying 600 records of 60 KB, reading slowly
//     (issue 54, N7: 1,003 MiB before; one address runs 2 replays at once)
// Goal (docs/limits-and-load.md "Memory"): growth <= limits.maxQueuedBytes (64 MiB) + 64 MiB.
// The attackers run in this process; svc is pinned to its own CPU when possible.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { startSvc, ROOT } = require('./lib/svc-process');
const { pipeliningNonReaders, pausedCoverReaders, slowloris, slowSseReplayers, loopbackAddresses } = require('./lib/attacks');
const { emitRow, emitFailure, log, envInt } = require('./lib/report');
const { procMemory, MiB } = require('./lib/rss');

const ATTACK_SECONDS = envInt('BENCH_ATTACK_SECONDS', 20);
const SETTLE_MS = 1500;
const BUDGET_MIB = 64;
const GOAL = `growth <= ${BUDGET_MIB + 64} MiB over idle`;

/** A database holding one 9.9 MB "PNG" (signature + random bytes), and its key. */
function databaseWithBigCover() {
  const { openDatabase } = require(path.join(ROOT, 'dist', 'store', 'sqlite', 'database.js'));
  const { createImageStore } = require(path.join(ROOT, 'dist', 'store', 'sqlite', 'images.js'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-cover-'));
  const dbFile = path.join(dir, 'svc.db');
  const db = openDatabase(dbFile);
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const bytes = Buffer.concat([png, crypto.randomBytes(9_900_000 - png.length)]);
  const { key } = createImageStore(db, { maxTotalBytes: 1 << 30 }).put(bytes);
  db.close();
  return { dir, dbFile, key };
}

/** A database holding 600 records of about 60 KB each (a long album field). */
async function databaseWithFatRecords() {
  const { openDatabase } = require(path.join(ROOT, 'dist', 'store', 'sqlite', 'database.js'));
  const { createPlayLogStore } = require(path.join(ROOT, 'dist', 'store', 'sqlite', 'plays.js'));
  const { createTrackStore } = require(path.join(ROOT, 'dist', 'store', 'sqlite', 'tracks.js'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-fat-'));
  const dbFile = path.join(dir, 'svc.db');
  const db = openDatabase(dbFile);
  const tracks = createTrackStore(db, createPlayLogStore(db));
  const start = Date.now() - 3_600_000;
  db.transaction(() => {
    for (let i = 0; i < 600; i++) {
      void tracks.insert({ receivedSeq: i + 1, receivedAt: new Date(start + i * 1000).toISOString(), metadata: { artist: `A${i}`, title: `T${i}`, album: 'x'.repeat(60_000) } });
    }
  })();
  db.close();
  return { dir, dbFile };
}

async function underAttack(label, start, options = {}) {
  const svc = await startSvc(options);
  try {
    await sleep(SETTLE_MS);
    const idle = procMemory(svc.pid).rss;
    const attack = start(svc.url);
    let peak = idle;
    const until = Date.now() + ATTACK_SECONDS * 1000;
    while (Date.now() < until) {
      await sleep(500);
      peak = Math.max(peak, procMemory(svc.pid).rss);
    }
    const started = Date.now();
    const status = await fetch(`${svc.url}/v1/status`, { signal: AbortSignal.timeout(10_000) }).then((res) => res.status, (error) => error.name);
    const statusMs = Date.now() - started;
    await attack.stop();
    log(`${label}: idle ${mib(idle)} MiB, peak ${mib(peak)} MiB (+${mib(peak - idle)}), /v1/status during the attack: ${status} in ${statusMs} ms`);
    return { idle, peak, status, statusMs };
  } finally {
    await svc.stop();
  }
}

async function main() {
  const addresses = loopbackAddresses(10);
  const only = process.env.BENCH_ATTACK_ONLY;
  const rows = [
    ['RSS growth, 60 pipelining non-readers (20 s)', () => underAttack('pipelining', (url) => pipeliningNonReaders(url, 60, { localAddresses: addresses }))],
    ['RSS growth, 50 paused 9.9 MB cover readers (20 s)', async () => {
      const cover = databaseWithBigCover();
      try {
        return await underAttack('paused cover readers', (url) => pausedCoverReaders(url, 50, cover.key, { localAddresses: addresses }), { dbFile: cover.dbFile });
      } finally {
        fs.rmSync(cover.dir, { recursive: true, force: true });
      }
    }],
    ['RSS growth, 100 slow SSE replays of 60 KB records from one address (20 s)', async () => {
      const fat = await databaseWithFatRecords();
      try {
        return await underAttack('slow SSE replays', (url) => slowSseReplayers(url, 100), { dbFile: fat.dbFile });
      } finally {
        fs.rmSync(fat.dir, { recursive: true, force: true });
      }
    }],
    ['RSS growth, 5,000 slowloris connections (20 s)', () => underAttack('slowloris', (url) => slowloris(url, 5000, { localAddresses: addresses }))],
  ];
  for (const [row, measure] of rows.filter(([name]) => !only || name.includes(only))) {
    try {
      const sample = await measure();
      emitRow({
        row,
        unit: 'MiB',
        svc: [mib(sample.peak - sample.idle)],
        baseline: { label: 'the same svc, idle RSS', values: [mib(sample.idle)] },
        goal: GOAL,
        details: { status: sample.status, statusMs: sample.statusMs },
      });
    } catch (error) {
      emitFailure(row, error, 'MiB');
      process.exitCode = 1;
    }
  }
}

function mib(bytes) {
  return Math.round((bytes / MiB) * 10) / 10;
}

main().catch((error) => {
  log(error.stack ?? String(error));
  process.exitCode = 1;
});
