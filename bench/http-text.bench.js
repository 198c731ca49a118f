'use strict';
// Plain text (docs/chat-bots-and-obs.md "Plain text"): GET /v1/last.txt (the plain-text line
// chat bots and OBS text sources poll) against GET /v1/last on the same svc process in the same
// run, alternating rounds (goal >= 0.9: the default line is built once per change, like
// /v1/last's body, and answered before Koa).

const { startSvc } = require('./lib/svc-process');
const { runLoad, assertCleanRun } = require('./lib/load');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { submissionBody } = require('./lib/fixtures');

const ROUNDS = envInt('BENCH_ROUNDS', 5);
const DURATION = envInt('BENCH_DURATION', 4);
const WARMUP = 2;
const CONNECTIONS = 50;
const ROW = 'GET /v1/last.txt throughput vs /v1/last (50 conn)';

async function main() {
  const svc = await startSvc();
  try {
    const seeded = await fetch(`${svc.url}/v1/remoteinput`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: submissionBody({ unique: false }) });
    if (seeded.status !== 200) throw new Error(`seeding /v1/remoteinput answered ${seeded.status}`);
    const text = await (await fetch(`${svc.url}/v1/last.txt`)).text();
    if (text === '') throw new Error('GET /v1/last.txt answered an empty line with a track playing');
    log(`svc ${svc.url} (pid ${svc.pid}); /v1/last.txt says ${JSON.stringify(text)}`);

    const load = async (path, duration, label) => assertCleanRun(await runLoad({ url: `${svc.url}${path}`, connections: CONNECTIONS, duration }), label);
    await load('/v1/last', WARMUP, 'warm-up /v1/last');
    await load('/v1/last.txt', WARMUP, 'warm-up /v1/last.txt');
    const samples = await alternate(ROUNDS, {
      text: async (round) => report(round, '/v1/last.txt', await load('/v1/last.txt', DURATION, `round ${round + 1} text`)),
      json: async (round) => report(round, '/v1/last', await load('/v1/last', DURATION, `round ${round + 1} json`)),
    });
    emitRow({
      row: ROW,
      unit: 'req/s',
      svc: samples.text.map((r) => r.requestsPerSecond),
      baseline: { label: 'GET /v1/last, same process', values: samples.json.map((r) => r.requestsPerSecond) },
      goal: '>= 0.9',
    });
  } finally {
    await svc.stop();
  }
}

function report(round, name, result) {
  log(`round ${round + 1} ${name.padEnd(13)} ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.latency.p99} ms`);
  return result;
}

main().catch((error) => {
  log(error.stack ?? String(error));
  emitFailure(ROW, error, 'req/s');
  process.exitCode = 1;
});
