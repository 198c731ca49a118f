'use strict';
// Idempotency keys near their bounds (docs/security.md "Idempotency keys"; issue 54, Low: keyed
// submissions paid a scan of every kept answer, 42.7 ms median against 3.9 ms): the key work of
// one keyed submission (claim, then answer, which trims the oldest past the bounds) through svc's
// SQLite store (dist/store/sqlite/idempotency) with 10,000 keys and about 30 MiB of answers kept,
// each new key pushing the oldest out, against the same work on a store bounded at 100 keys (each
// new key pushes one out there too), same run (goal <= 2: the trim reads the totals row and the
// oldest keys from an index, not every kept answer).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT } = require('./lib/svc-process');
const { CPU, pinSelf } = require('./lib/processes');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { median } = require('./lib/stats');

const ROUNDS = envInt('BENCH_ROUNDS', 5);
const CALLS = envInt('BENCH_IDEMPOTENCY_CALLS', 200);
const FULL = 10_000;
const FEW = 100;
const ANSWER = 'x'.repeat(3_000);
const LEASE_MS = 60_000;
const ROW = "a keyed submission's key work (claim + answer) at the bounds, 10,000 keys and 30 MiB kept vs 100";

const dist = (file) => require(path.join(ROOT, 'dist', file));

/** A store on a new file holding `kept` answered keys; its clock runs on from there. */
async function filled(file, kept, bounds) {
  const { openDatabase } = dist('store/sqlite/database');
  const { createIdempotencyStore } = dist('store/sqlite/idempotency');
  const db = openDatabase(file);
  const keys = createIdempotencyStore(db, bounds);
  const now = Date.now();
  db.transaction(() => {
    for (let i = 0; i < kept; i++) {
      void keys.claim(`fill-${i}`, 'f', now - kept + i, LEASE_MS);
      void keys.answer(`fill-${i}`, 200, ANSWER);
    }
  })();
  return { db, keys, next: 0, now };
}

/** The median ms of CALLS keyed submissions' key work. */
async function keyWork(state, label) {
  const times = [];
  for (let i = 0; i < CALLS; i++) {
    const key = `${label}-${(state.next += 1)}`;
    const started = performance.now();
    await state.keys.claim(key, 'f', state.now + state.next, LEASE_MS);
    await state.keys.answer(key, 200, ANSWER);
    times.push(performance.now() - started);
  }
  return median(times);
}

async function main() {
  pinSelf(CPU.load);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-idempotency-'));
  const states = [];
  try {
    const full = await filled(path.join(dir, 'full.db'), FULL);
    const few = await filled(path.join(dir, 'few.db'), FEW, { maxEntries: FEW, maxBytes: 32 * 1024 * 1024 });
    states.push(full, few);
    const kept = full.db.prepare('SELECT count(*) AS n, sum(length(body)) AS bytes FROM idempotency_keys').get();
    log(`full store: ${kept.n} keys, ${(kept.bytes / 1024 / 1024).toFixed(1)} MiB of answers`);
    const samples = await alternate(ROUNDS, { full: () => keyWork(full, 'full'), few: () => keyWork(few, 'few') });
    emitRow({
      row: ROW,
      unit: 'ms',
      svc: samples.full,
      baseline: { label: `the same key work on a store bounded at ${FEW} keys, same run`, values: samples.few },
      goal: '<= 2',
    });
  } catch (error) {
    log(error.stack ?? String(error));
    emitFailure(ROW, error, 'ms');
    process.exitCode = 1;
  } finally {
    for (const state of states) state.db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
