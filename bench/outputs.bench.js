'use strict';
// Outputs (docs/outputs.md): ten local webhook receivers, one of them black-holed (it accepts the
// connection and never answers).
//   a) submission -> receipt at the 9 live receivers, p99 per round of 20 sequential submissions
//      (goal < 250 ms in every round); the baseline column is the p50 of the same deliveries.
//   b) POST /v1/remoteinput latency (p50) of an svc with those ten outputs against an svc without
//      outputs, alternating rounds, same run (goal <= 1.1). Submissions are paced as track changes
//      are: each one after the previous one's deliveries have arrived, then 20 ms of quiet, on
//      both servers alike. This is what the outputs add to one submission's answer.
//   c) the same with submissions back to back (no goal): a flood of track changes, where the
//      deliveries of one share the CPU with the next submissions. It shows the delivery cost.
// The receivers run in their own process on the load CPU (bench/lib/webhook-receivers.js): in
// this one they would delay the reading of the very answers it times. This process, the client
// that times the answers, is pinned to the load CPU too, as every load generator is
// (bench/lib/processes.js): left to float, it was often woken on the server's CPU, where it
// waited behind svc's own work after the answer, and the row measured where the scheduler put
// it (1.1 to 1.3 times apart with the same build). Times are on the shared clock
// (performance.timeOrigin + now). Every request and delivery stays on loopback.

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
const LATENCY_SUBMISSIONS = envInt('BENCH_OUTPUT_SUBMISSIONS', 100);
const ROW_RECEIPT = 'submission -> receipt, 9 live webhooks + 1 black-holed, p99';
const ROW_SUBMIT = 'POST /v1/remoteinput p50 with 10 outputs vs none, paced like track changes';
const ROW_FLOOD = 'POST /v1/remoteinput p50 with 10 outputs vs none, back to back';
const QUIET_MS = 20;
const SECRET = `whsec_${Buffer.from('svc bench outputs signing secret').toString('base64')}`;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The receivers' process; `arrivals` fills with dbid -> arrival times. */
function startReceivers(arrivals) {
  const child = spawnPinned(CPU.load, process.execPath, [path.join(__dirname, 'lib', 'webhook-receivers.js'), '9'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('message', (message) => {
      if (message.type === 'arrival') {
        if (!arrivals.has(message.dbid)) arrivals.set(message.dbid, []);
        arrivals.get(message.dbid).push(message.at);
      } else if (message.type === 'ready') {
        resolve({ ports: message.ports, holePort: message.holePort, stop: () => child.connected && child.send({ type: 'stop' }) });
      }
    });
  });
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
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`POST answered ${res.statusCode}`));
          resolve({ started, ms: performance.timeOrigin + performance.now() - started, dbid: JSON.parse(Buffer.concat(chunks).toString('utf8')).dbid });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function main() {
  pinSelf(CPU.load);
  const arrivals = new Map();
  const receivers = await startReceivers(arrivals);
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-outputs-'));
  const configFile = path.join(configDir, 'outputs.json');
  const outputs = receivers.ports.map((port, index) => ({ name: `hook-${index}`, type: 'webhook', url: `http://127.0.0.1:${port}/in`, secret: SECRET }));
  outputs.push({ name: 'black-hole', type: 'webhook', url: `http://127.0.0.1:${receivers.holePort}/in`, secret: SECRET });
  fs.writeFileSync(configFile, JSON.stringify({ outputs }));
  const emptyConfig = path.join(configDir, 'none.json');
  fs.writeFileSync(emptyConfig, '{}');
  const withOutputs = await startSvc({ args: ['--config', configFile] });
  const without = await startSvc({ args: ['--config', emptyConfig] });
  let sequence = 0;
  try {
    // a) receipts
    const p99s = [];
    const p50s = [];
    for (let round = 0; round < ROUNDS; round++) {
      const sent = [];
      for (let i = 0; i < PER_ROUND; i++) sent.push(await submit(withOutputs.url, `receipt ${sequence++}`));
      const deadline = Date.now() + 20_000;
      while (sent.some((one) => (arrivals.get(one.dbid) ?? []).length < 9) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      const latencies = sent.flatMap((one) => (arrivals.get(one.dbid) ?? []).map((at) => at - one.started));
      if (latencies.length < PER_ROUND * 9) throw new Error(`${latencies.length} of ${PER_ROUND * 9} deliveries arrived within 20 s`);
      p99s.push(percentile(latencies, 99));
      p50s.push(percentile(latencies, 50));
      log(`round ${round + 1}: p50 ${p50s.at(-1).toFixed(1)} ms, p99 ${p99s.at(-1).toFixed(1)} ms`);
    }
    emitRow({ row: ROW_RECEIPT, unit: 'ms', svc: p99s, baseline: { label: 'p50 of the same deliveries', values: p50s }, goal: '< 250 ms' });
  } catch (error) {
    emitFailure(ROW_RECEIPT, error, 'ms');
  }
  try {
    // b) and c) submission latency with and without outputs
    const latencyOf = (url, paced) => async () => {
      const times = [];
      for (let i = 0; i < LATENCY_SUBMISSIONS; i++) {
        const sent = await submit(url, `latency ${sequence++}`);
        times.push(sent.ms);
        if (!paced) continue;
        const deadline = Date.now() + 5_000;
        while (url === withOutputs.url && (arrivals.get(sent.dbid) ?? []).length < 9 && Date.now() < deadline) await sleep(2);
        await sleep(QUIET_MS);
      }
      return median(times);
    };
    for (const [row, paced] of [
      [ROW_SUBMIT, true],
      [ROW_FLOOD, false],
    ]) {
      const samples = await alternate(ROUNDS, { with: latencyOf(withOutputs.url, paced), without: latencyOf(without.url, paced) });
      emitRow({
        row,
        unit: 'ms',
        svc: samples.with,
        baseline: { label: 'the same svc build without outputs', values: samples.without },
        ...(paced ? { goal: '<= 1.1' } : {}),
      });
    }
  } catch (error) {
    emitFailure(ROW_SUBMIT, error, 'ms');
  }
  agent.destroy();
  receivers.stop();
  await Promise.all([withOutputs.stop(), without.stop()]);
  fs.rmSync(configDir, { recursive: true, force: true });
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
