'use strict';
// Row 1: GET /v1/last on svc against a bare node:http server answering the same bytes
// (same status, headers and body, captured from svc), each in its own process, pinned to the
// same CPU, loaded by autocannon from another process and CPU. Throughput and p99, medians of
// alternating rounds. BENCH_PROFILE=1 also writes CPU profiles of svc and of the baseline to
// bench/results/profiles/{svc,baseline}/ (summarize with bench/lib/cpuprofile-summary.js).

const path = require('node:path');
const { startSvc, ROOT } = require('./lib/svc-process');
const { startBaseline, captureResponse } = require('./lib/baseline');
const { runLoad, assertCleanRun } = require('./lib/load');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { submissionBody } = require('./lib/fixtures');
const { measureCpu } = require('./lib/cpu');

const ROUNDS = envInt('BENCH_ROUNDS', 5);
const DURATION = envInt('BENCH_DURATION', 5);
const WARMUP = 2;
const CONNECTIONS = 50;
const ROW_RPS = 'GET /v1/last throughput (50 conn)';
const ROW_P99 = 'GET /v1/last p99 latency (50 conn)';
const ROW_CPU = 'GET /v1/last server CPU per request';

async function main() {
  const profileDir = process.env.BENCH_PROFILE === '1' ? path.join(ROOT, 'bench', 'results', 'profiles') : null;
  const profileArgs = (name) => (profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, name)}`] : []);
  const svc = await startSvc({ nodeArgs: profileArgs('svc') });
  let baseline = null;
  try {
    // A real current track, so /v1/last answers a full record rather than `{}`.
    const seeded = await fetch(`${svc.url}/v1/remoteinput`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: submissionBody({ unique: false }),
    });
    if (seeded.status !== 200) throw new Error(`seeding /v1/remoteinput answered ${seeded.status}`);

    const lastUrl = `${svc.url}/v1/last`;
    const response = await captureResponse(lastUrl);
    if (response.status !== 200) throw new Error(`GET /v1/last answered ${response.status}`);
    baseline = await startBaseline(response, { nodeArgs: profileArgs('baseline') });
    await assertSameResponse(lastUrl, `${baseline.url}/v1/last`);
    log(`svc ${svc.url} (pid ${svc.pid}), baseline ${baseline.url} (pid ${baseline.pid}); ${response.body.length} body bytes, headers: ${Object.keys(response.headers).join(', ')}`);

    const load = async (server, duration, label) => {
      const { result, cpuSeconds } = await measureCpu(server.pid, () => runLoad({ url: `${server.url}/v1/last`, connections: CONNECTIONS, duration }));
      // The server is idle outside the run, so its CPU over the run's length is its busy share.
      return {
        ...assertCleanRun(result, label),
        serverCpu: cpuSeconds / result.activeSeconds,
        cpuMicrosPerRequest: (cpuSeconds * 1e6) / result.completed,
      };
    };
    await load(svc, WARMUP, 'svc warm-up');
    await load(baseline, WARMUP, 'baseline warm-up');

    const samples = await alternate(ROUNDS, {
      svc: async (round) => report(round, 'svc', await load(svc, DURATION, `svc round ${round + 1}`)),
      baseline: async (round) => report(round, 'baseline', await load(baseline, DURATION, `baseline round ${round + 1}`)),
    });
    const cpuDetails = {
      svcServerCpu: samples.svc.map((r) => round2(r.serverCpu)),
      baselineServerCpu: samples.baseline.map((r) => round2(r.serverCpu)),
      loadGeneratorCpu: [...samples.svc, ...samples.baseline].map((r) => round2(r.loadGeneratorCpu)),
    };

    const label = 'bare node:http, same bytes';
    emitRow({
      row: ROW_RPS,
      unit: 'req/s',
      svc: samples.svc.map((r) => r.requestsPerSecond),
      baseline: { label, values: samples.baseline.map((r) => r.requestsPerSecond) },
      goal: '>= 0.75',
      details: cpuDetails,
    });
    emitRow({
      row: ROW_P99,
      unit: 'ms',
      svc: samples.svc.map((r) => r.latency.p99),
      baseline: { label, values: samples.baseline.map((r) => r.latency.p99) },
      // The same 0.75 goal seen from the latency side: svc's p99 at most 1/0.75 of the baseline's.
      goal: '<= 1.33',
    });
    emitRow({
      row: ROW_CPU,
      unit: 'us',
      svc: samples.svc.map((r) => r.cpuMicrosPerRequest),
      baseline: { label, values: samples.baseline.map((r) => r.cpuMicrosPerRequest) },
      // What the work per request costs, whoever else uses the machine and whether or not the
      // load generator kept up: the 0.75 throughput goal for a CPU-bound server, as a cost.
      goal: '<= 1.33',
    });
  } finally {
    await Promise.all([svc.stop(), baseline?.stop()]);
    if (profileDir) log(`CPU profiles written to ${profileDir}/{svc,baseline} (summarize: node bench/lib/cpuprofile-summary.js FILE)`);
  }
}

function report(round, name, result) {
  log(`round ${round + 1} ${name.padEnd(8)} ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
    `server CPU ${(result.serverCpu * 100).toFixed(0)}% (${result.cpuMicrosPerRequest.toFixed(1)} us/req), load generator CPU ${(result.loadGeneratorCpu * 100).toFixed(0)}%`);
  return result;
}

function round2(value) {
  return Math.round(value * 100) / 100;
}

/** The baseline must answer what svc answers, or the ratio compares different work. */
async function assertSameResponse(svcUrl, baselineUrl) {
  const [a, b] = await Promise.all([captureResponse(svcUrl), captureResponse(baselineUrl)]);
  const volatile = new Set(['x-request-id']);
  const names = (r) => Object.keys(r.headers).sort().join(',');
  if (a.body !== b.body || a.status !== b.status || names(a) !== names(b)) {
    throw new Error(`baseline answers differently from svc: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  }
  for (const [name, value] of Object.entries(a.headers)) {
    if (volatile.has(name) ? value.length !== b.headers[name].length : value !== b.headers[name]) {
      throw new Error(`baseline header ${name} differs: ${value} vs ${b.headers[name]}`);
    }
  }
}

main().catch((error) => {
  log(error.stack ?? String(error));
  emitFailure(ROW_RPS, error, 'req/s');
  process.exitCode = 1;
});
