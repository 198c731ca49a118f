'use strict';
// `npm test`: runs Jest, then prints the one closing line CI reads: "N passed, N failed".
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const resultsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-jest-')), 'results.json');
const jest = require.resolve('jest/bin/jest');
const run = spawnSync(process.execPath, [jest, '--json', `--outputFile=${resultsFile}`, ...process.argv.slice(2)], {
  stdio: 'inherit',
});

let passed = 0;
let failed = 0;
try {
  const results = JSON.parse(fs.readFileSync(resultsFile, 'utf8'));
  passed = results.numPassedTests;
  // A suite that fails to load has no tests to count; count it as a failure so it cannot hide.
  failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
} catch {
  failed = Math.max(failed, 1);
}
fs.rmSync(path.dirname(resultsFile), { recursive: true, force: true });
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(run.status === 0 && failed === 0 ? 0 : 1);
