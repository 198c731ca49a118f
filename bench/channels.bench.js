'use strict';
// Channels (docs/channels.md): submissions spread over 10 channels at once against the same
// number on one channel, on one svc process (SQLite, enrichment off), alternating in the same run.
// Each channel has its own current play, its own play order and its own view; none of that may
// cost the write path: goal 10 channels >= 0.9 x one channel. Afterwards every submission sent
// must be stored, on the channel it named.

const Database = require('better-sqlite3');
const { startSvc } = require('./lib/svc-process');
const { runLoad, assertCleanRun } = require('./lib/load');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { SUBMISSION, UNIQUE_MARKER } = require('./lib/fixtures');

const ROUNDS = envInt('BENCH_ROUNDS', 5);
const CONNECTIONS = 50;
const AMOUNT = envInt('BENCH_CHANNEL_SUBMISSIONS', 4000);
const CHANNEL_MARKER = '[<channel>]';
const ROW = 'POST /v1/remoteinput throughput, 10 channels at once vs 1 channel (50 conn)';

function load(url, channels) {
  return {
    url: `${url}/v1/remoteinput`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...SUBMISSION, channel: CHANNEL_MARKER }),
    uniqueMarker: UNIQUE_MARKER,
    channelMarker: CHANNEL_MARKER,
    channels,
    connections: CONNECTIONS,
    amount: AMOUNT,
  };
}

async function main() {
  const svc = await startSvc({ keepDir: true });
  let samples;
  let sent = 0;
  let stored;
  try {
    const run = async (channels, label) => {
      const result = assertCleanRun(await runLoad(load(svc.url, channels), { timeoutMs: 120_000 }), label);
      sent += result['2xx'];
      log(`${label}: ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.latency.p99} ms`);
      return result;
    };
    await run(10, 'warm-up');
    samples = await alternate(ROUNDS, {
      ten: (round) => run(10, `10 channels, round ${round + 1}`),
      one: (round) => run(1, `1 channel, round ${round + 1}`),
    });
  } finally {
    await svc.stop();
    try {
      const db = new Database(svc.dbFile, { readonly: true, fileMustExist: true });
      try {
        stored = db.prepare('SELECT count(*) AS rows, count(DISTINCT channel) AS channels FROM tracks').get();
      } finally {
        db.close();
      }
    } finally {
      require('node:fs').rmSync(svc.dir, { recursive: true, force: true });
    }
  }
  const problems = [];
  if (stored.rows !== sent) problems.push(`${stored.rows} rows stored for ${sent} 2xx answers`);
  if (stored.channels !== 10) problems.push(`${stored.channels} channels stored, not 10`);
  emitRow({
    row: ROW,
    unit: 'req/s',
    svc: samples.ten.map((r) => r.requestsPerSecond),
    baseline: { label: 'the same submissions on one channel, same run', values: samples.one.map((r) => r.requestsPerSecond) },
    goal: '>= 0.9',
    error: problems.length > 0 ? problems.join('; ') : undefined,
    details: { stored },
  });
}

main().catch((error) => {
  log(error.stack ?? String(error));
  emitFailure(ROW, error, 'req/s');
  process.exitCode = 1;
});
