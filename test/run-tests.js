'use strict';
// `npm test`: runs Jest, then prints the skip lines (test/helpers/peers.ts) and the one closing
// line CI reads: "N passed, N failed, N skipped". The counts come from test/count-reporter.js,
// never from Jest's JSON output. Under CI (`CI=true`) a skipped test fails the run.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-jest-'));
const countsFile = path.join(workDir, 'counts.json');
const skipsDir = path.join(workDir, 'skips');
fs.mkdirSync(skipsDir);
const underCi = !['', 'false', '0'].includes((process.env.CI ?? '').toLowerCase());

const jest = require.resolve('jest/bin/jest');
const reporter = path.join(__dirname, 'count-reporter.js');
// The reporters go last: Jest reads --reporters as a list, which would swallow file names after it.
const run = spawnSync(process.execPath, [jest, ...process.argv.slice(2), '--reporters=default', `--reporters=${reporter}`], {
  stdio: 'inherit',
  env: { ...process.env, SVC_TEST_COUNTS_FILE: countsFile, SVC_TEST_SKIPS_DIR: skipsDir },
});

let counts = { passed: 0, failed: 0, skipped: 0, skippedTests: [] };
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
process.stdout.write(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
const failedRun = run.status !== 0 || counts.failed > 0 || (underCi && counts.skipped > 0);
process.exit(failedRun ? 1 : 0);
