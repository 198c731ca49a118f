'use strict';
// `npm test`: runs Jest, then prints the skip lines (test/helpers/peers.ts) and the one closing
// line CI reads: "N passed, N failed, N skipped". Before it: the run's wall time, the 10 slowest
// files, and the total of the real-time waits the tests made (test/helpers/real-time.ts, kept under
// 10 s; docs/architecture.md "Time in tests"). The counts come from test/count-reporter.js,
// never from Jest's JSON output. Under CI (`CI=true`) a skipped test fails the run.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-jest-'));
const countsFile = path.join(workDir, 'counts.json');
const skipsDir = path.join(workDir, 'skips');
fs.mkdirSync(skipsDir);
const realTimeDir = path.join(workDir, 'real-time');
fs.mkdirSync(realTimeDir);
const REAL_TIME_BUDGET_MS = 10_000;
const SLOWEST_SHOWN = 10;
const startedAt = Date.now();
const underCi = !['', 'false', '0'].includes((process.env.CI ?? '').toLowerCase());

const jest = require.resolve('jest/bin/jest');
const reporter = path.join(__dirname, 'count-reporter.js');
// The reporters go last: Jest reads --reporters as a list, which would swallow file names after it.
const run = spawnSync(process.execPath, [jest, ...process.argv.slice(2), '--reporters=default', `--reporters=${reporter}`], {
  stdio: 'inherit',
  env: { ...process.env, SVC_TEST_COUNTS_FILE: countsFile, SVC_TEST_SKIPS_DIR: skipsDir, SVC_TEST_REAL_TIME_DIR: realTimeDir },
});

const wallMs = Date.now() - startedAt;
let counts = { passed: 0, failed: 0, skipped: 0, skippedTests: [], files: [] };
try {
  counts = JSON.parse(fs.readFileSync(countsFile, 'utf8'));
} catch {
  process.stdout.write('jest ended without reporting its counts (see its output above)\n');
  counts.failed = Math.max(counts.failed, 1);
}
const skipLines = [
  ...new Set(
    fs
      .readdirSync(skipsDir)
      .flatMap((file) => fs.readFileSync(path.join(skipsDir, file), 'utf8').split('\n'))
      .filter((line) => line !== ''),
  ),
].sort();
const realTimeWaits = fs
  .readdirSync(realTimeDir)
  .flatMap((file) => fs.readFileSync(path.join(realTimeDir, file), 'utf8').split('\n'))
  .filter((line) => line !== '')
  .map((line) => JSON.parse(line));
fs.rmSync(workDir, { recursive: true, force: true });

// One line per missing program, naming the suites it skipped.
const byProgram = new Map();
for (const line of skipLines) {
  const at = line.indexOf(': "');
  const head = at < 0 ? line : line.slice(0, at);
  byProgram.set(head, [...(byProgram.get(head) ?? []), ...(at < 0 ? [] : [line.slice(at + 2)])]);
}
for (const [head, suites] of byProgram) process.stdout.write(`${head}${suites.length > 0 ? `: ${suites.join(', ')}` : ''}\n`);
if (skipLines.length > 0) process.stdout.write('install them with: npm run setup-peers (Debian/Ubuntu)\n');
if (underCi && counts.skipped > 0) {
  process.stdout.write(`CI=true: a skipped test fails the run; skipped:\n`);
  for (const test of counts.skippedTests) process.stdout.write(`  ${test}\n`);
}
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const realTimeMs = realTimeWaits.reduce((sum, wait) => sum + wait.ms, 0);
const slowest = [...(counts.files ?? [])].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST_SHOWN);
process.stdout.write(`wall time ${seconds(wallMs)} with ${os.availableParallelism()} CPUs, load average ${os.loadavg()[0].toFixed(2)} at the end\n`);
if (slowest.length > 0) process.stdout.write(`slowest ${slowest.length} files:\n`);
for (const entry of slowest) process.stdout.write(`  ${seconds(entry.ms).padStart(8)}  ${entry.file}\n`);
process.stdout.write(
  `real-time waits (test/helpers/real-time.ts): ${realTimeWaits.length}, ${seconds(realTimeMs)} in all (budget ${seconds(REAL_TIME_BUDGET_MS)})\n`,
);
// Over the budget the run says so and names each wait (not yet a failure: the waits the Mixxx and
// Icecast listener suites still make add up to more; docs/architecture.md "Time in tests").
if (realTimeMs > REAL_TIME_BUDGET_MS) {
  process.stdout.write(`OVER the real-time budget of ${seconds(REAL_TIME_BUDGET_MS)}; the waits:\n`);
  for (const wait of realTimeWaits) process.stdout.write(`  ${wait.ms} ms  ${wait.why}  (${wait.test})\n`);
}
process.stdout.write(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
const failedRun = run.status !== 0 || counts.failed > 0 || (underCi && counts.skipped > 0);
process.exit(failedRun ? 1 : 0);
