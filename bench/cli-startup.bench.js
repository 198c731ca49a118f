#!/usr/bin/env node
'use strict';
// Row: `svc last --json` against a bare `node -e` fetch of the same URL, run alternately in one
// run; the ratio of median wall times (goal <= 1.3). Start-up is most of a one-shot command's
// cost, so this is what a shell script calling `svc last` in a loop pays.
//
// Usage: npm run build && node bench/cli-startup.bench.js [runs]   (runs of each, default 30)
// Loopback only; bounded in time; diagnostics on stderr; one JSON line on stdout.

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const SVC_BIN = path.join(ROOT, 'bin', 'svc.js');
const GOAL = 1.3;
const RUN_TIMEOUT_MS = 10_000;
const TOTAL_BUDGET_MS = 120_000;

function parseRuns(argv) {
  const runs = argv[0] === undefined ? 30 : Number(argv[0]);
  if (!Number.isInteger(runs) || runs < 3) throw new Error('runs must be an integer >= 3');
  return runs;
}

/** The environment both contestants get: no SVC_* variables, no colour settings. */
function cleanEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('SVC_') && key !== 'NODE_OPTIONS' && key !== 'FORCE_COLOR' && key !== 'NO_COLOR') env[key] = value;
  }
  return env;
}

function assertLoopback(url) {
  const host = new URL(url).hostname;
  if (!/^127(\.\d{1,3}){3}$/.test(host) && host !== '[::1]' && host !== 'localhost') {
    throw new Error(`refusing to benchmark against a non-loopback host: ${host}`);
  }
}

/** `svc serve` on a free loopback port, a temp database, no outbound lookups. */
function startServer(dir) {
  const child = spawn(process.execPath, [SVC_BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--db', path.join(dir, 'bench.db'), '--offline'], {
    cwd: dir,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc serve did not start within 15 s: ${stderr}`));
    }, 15_000);
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      stdout += chunk;
      const match = /listening on (\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1] });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`svc serve exited with ${code}: ${stderr}`));
    });
  });
}

function stopServer(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Runs one command to completion; returns its wall time in ms and its stdout. */
function timeRun(args, cwd) {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd, env: cleanEnv(), encoding: 'utf8', timeout: RUN_TIMEOUT_MS });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited with ${result.status}: ${result.stderr}`);
  return { ms, stdout: result.stdout };
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const round = (n) => Math.round(n * 10) / 10;
  return { median: round(median), min: round(sorted[0]), max: round(sorted[sorted.length - 1]) };
}

async function main() {
  const runs = parseRuns(process.argv.slice(2));
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  // An empty working directory: no config file, so neither side reads one.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-cli-'));
  const { child, url } = await startServer(dir);
  const deadline = Date.now() + TOTAL_BUDGET_MS;
  try {
    assertLoopback(url);
    const lastUrl = `${url}/v1/last`;
    const submitted = await fetch(`${url}/v1/remoteinput`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ artist: 'Daft Punk', title: 'One More Time', album: 'Discovery', date: '2001' }),
    });
    if (!submitted.ok) throw new Error(`submitting the bench track failed: ${submitted.status}`);

    const svcArgs = [SVC_BIN, 'last', '--json', '--url', url];
    const baselineArgs = ['-e', `fetch(${JSON.stringify(lastUrl)}).then(r=>r.text()).then(t=>process.stdout.write(t))`];

    // Both must print the same track, or the comparison means nothing.
    const svcOut = JSON.parse(timeRun(svcArgs, dir).stdout);
    const baselineOut = JSON.parse(timeRun(baselineArgs, dir).stdout);
    if (JSON.stringify(svcOut) !== JSON.stringify(baselineOut)) {
      throw new Error(`svc and the baseline disagree: ${JSON.stringify(svcOut)} vs ${JSON.stringify(baselineOut)}`);
    }
    // Warm the OS file cache for both before measuring.
    for (let i = 0; i < 2; i++) {
      timeRun(svcArgs, dir);
      timeRun(baselineArgs, dir);
    }

    const svcTimes = [];
    const baselineTimes = [];
    for (let i = 0; i < runs && Date.now() < deadline; i++) {
      // Alternate which goes first, so drift in machine load hits both sides alike.
      if (i % 2 === 0) {
        svcTimes.push(timeRun(svcArgs, dir).ms);
        baselineTimes.push(timeRun(baselineArgs, dir).ms);
      } else {
        baselineTimes.push(timeRun(baselineArgs, dir).ms);
        svcTimes.push(timeRun(svcArgs, dir).ms);
      }
    }
    if (svcTimes.length < runs) process.stderr.write(`cli-startup: time budget reached after ${svcTimes.length} of ${runs} runs\n`);

    const svc = stats(svcTimes);
    const baseline = stats(baselineTimes);
    const ratio = Math.round((svc.median / baseline.median) * 100) / 100;
    process.stderr.write(`cli-startup: ${svcTimes.length} runs each; svc median ${svc.median} ms, node -e fetch median ${baseline.median} ms\n`);
    process.stdout.write(
      JSON.stringify({
        row: 'svc last --json start-up',
        unit: 'ms',
        svc,
        baseline: { label: 'node -e fetch', ...baseline },
        ratio,
        goal: `<= ${GOAL}`,
        met: ratio <= GOAL,
      }) + '\n',
    );
  } finally {
    await stopServer(child);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`cli-startup: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
