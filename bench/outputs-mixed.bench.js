'use strict';
// Outputs of mixed types (docs/outputs.md): ten outputs, two webhooks, two directories (url),
// two RDS encoders, two DLS files, an OBS Text source and a ListenBrainz scrobbler, each against
// a local target in its own process on the load CPU (bench/lib/reach-receivers.js).
//   a) submission -> receipt at the nine targets that take every change at once, p99 per round
//      of 20 submissions (goal < 250 ms in every round); the baseline column is the p50 of the
//      same deliveries. Each submission waits for the previous one's nine arrivals: the
//      current-state types (url, obs, rds, dls) send only the newest when behind, so a flood
//      would skip titles rather than show their latency. ListenBrainz is left out of this row:
//      its one call a second (its own rule) paces it, not svc.
//   b) POST /v1/remoteinput p50 with those ten outputs against an svc without outputs, paced the
//      same way, alternating rounds, same run (goal <= 1.1).
// Times are on the shared clock (performance.timeOrigin + now). Every request stays on loopback.

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { startSvc } = require('./lib/svc-process');
const { CPU, pinSelf, spawnPinned } = require('./lib/processes');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { median } = require('./lib/stats');

const ROUNDS = envInt('BENCH_ROUNDS', 5);
const PER_ROUND = 20;
const LATENCY_SUBMISSIONS = envInt('BENCH_OUTPUT_SUBMISSIONS', 60);
const TARGETS = 9;
const ROW_RECEIPT = 'submission -> receipt, 10 mixed outputs (webhook, url, rds, dls, obs; scrobbler left out), p99';
const ROW_SUBMIT = 'POST /v1/remoteinput p50 with 10 mixed outputs vs none, paced like track changes';
const QUIET_MS = 20;
const SECRET = `whsec_${Buffer.from('svc bench outputs signing secret').toString('base64')}`;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function startReceivers(dlsDir, arrivals) {
  const child = spawnPinned(CPU.load, process.execPath, [path.join(__dirname, 'lib', 'reach-receivers.js'), dlsDir], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('message', (message) => {
      if (message.type === 'arrival') {
        if (message.kind === 'listenbrainz') return;
        if (!arrivals.has(message.title)) arrivals.set(message.title, []);
        arrivals.get(message.title).push({ kind: message.kind, at: message.at });
      } else if (message.type === 'ready') {
        resolve({ ...message, stop: () => child.connected && child.send({ type: 'stop' }) });
      }
    });
  });
}

function mixedOutputs(targets, dlsDir) {
  return [
    ...targets.webhooks.map((port, index) => ({ name: `hook-${index}`, type: 'webhook', url: `http://127.0.0.1:${port}/in`, secret: SECRET })),
    ...targets.urls.map((port, index) => ({ name: `directory-${index}`, type: 'url', url: `http://127.0.0.1:${port}/Playing.ashx?partnerId=P&partnerKey=K&id=s1&title={{title}}&artist={{artist}}` })),
    ...targets.rds.map((port, index) => ({ name: `rds-${index}`, type: 'rds', url: `tcp://127.0.0.1:${port}`, rtPlus: true })),
    ...[0, 1].map((index) => ({ name: `dab-${index}`, type: 'dls', path: path.join(dlsDir, `dls-${index}.txt`) })),
    { name: 'obs', type: 'obs', url: `ws://127.0.0.1:${targets.obs}`, input: 'Now Playing' },
    { name: 'listenbrainz', type: 'listenbrainz', token: 'bench-token', url: `http://127.0.0.1:${targets.listenbrainz}` },
  ];
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function submit(url, title) {
  const body = JSON.stringify({ artist: 'Bench Artist', title });
  return new Promise((resolve, reject) => {
    const started = performance.timeOrigin + performance.now();
    const req = http.request(
      `${url}/v1/remoteinput`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve({ started, ms: performance.timeOrigin + performance.now() - started }) : reject(new Error(`POST answered ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function waitForArrivals(arrivals, title, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while ((arrivals.get(title) ?? []).length < TARGETS && Date.now() < deadline) await sleep(2);
  return arrivals.get(title) ?? [];
}

async function main() {
  pinSelf(CPU.load);
  const arrivals = new Map();
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-mixed-'));
  const dlsDir = path.join(workDir, 'dls');
  fs.mkdirSync(dlsDir);
  const targets = await startReceivers(dlsDir, arrivals);
  const configFile = path.join(workDir, 'outputs.json');
  fs.writeFileSync(configFile, JSON.stringify({ outputs: mixedOutputs(targets, dlsDir) }));
  const emptyConfig = path.join(workDir, 'none.json');
  fs.writeFileSync(emptyConfig, '{}');
  const withOutputs = await startSvc({ args: ['--config', configFile] });
  const without = await startSvc({ args: ['--config', emptyConfig] });
  let sequence = 0;
  try {
    // Warm-up, discarded: the first deliveries open connections and compile the send paths.
    for (let i = 0; i < 10; i++) {
      const title = `warm-up ${sequence++}`;
      await submit(withOutputs.url, title);
      await waitForArrivals(arrivals, title);
    }
    const p99s = [];
    const p50s = [];
    for (let round = 0; round < ROUNDS; round++) {
      const latencies = [];
      for (let i = 0; i < PER_ROUND; i++) {
        const title = `receipt ${sequence++}`;
        const sent = await submit(withOutputs.url, title);
        const arrived = await waitForArrivals(arrivals, title);
        if (arrived.length < TARGETS) throw new Error(`${title}: ${arrived.length} of ${TARGETS} targets within 5 s`);
        latencies.push(...arrived.map((one) => ({ kind: one.kind, ms: one.at - sent.started })));
        await sleep(QUIET_MS);
      }
      const values = latencies.map((one) => one.ms);
      p99s.push(percentile(values, 99));
      p50s.push(percentile(values, 50));
      const slowest = latencies.reduce((worst, one) => (one.ms > worst.ms ? one : worst));
      log(`round ${round + 1}: p50 ${p50s.at(-1).toFixed(1)} ms, p99 ${p99s.at(-1).toFixed(1)} ms, slowest ${slowest.kind} ${slowest.ms.toFixed(1)} ms`);
    }
    emitRow({ row: ROW_RECEIPT, unit: 'ms', svc: p99s, baseline: { label: 'p50 of the same deliveries', values: p50s }, goal: '< 250 ms' });
  } catch (error) {
    emitFailure(ROW_RECEIPT, error, 'ms');
  }
  try {
    const latencyOf = (url) => async () => {
      const times = [];
      for (let i = 0; i < LATENCY_SUBMISSIONS; i++) {
        const title = `latency ${sequence++}`;
        const sent = await submit(url, title);
        times.push(sent.ms);
        if (url === withOutputs.url) await waitForArrivals(arrivals, title);
        await sleep(QUIET_MS);
      }
      return median(times);
    };
    const samples = await alternate(ROUNDS, { with: latencyOf(withOutputs.url), without: latencyOf(without.url) });
    emitRow({ row: ROW_SUBMIT, unit: 'ms', svc: samples.with, baseline: { label: 'the same svc build without outputs', values: samples.without }, goal: '<= 1.1' });
  } catch (error) {
    emitFailure(ROW_SUBMIT, error, 'ms');
  }
  agent.destroy();
  targets.stop();
  await Promise.all([withOutputs.stop(), without.stop()]);
  fs.rmSync(workDir, { recursive: true, force: true });
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
