'use strict';
// A Jest reporter that writes only the counts `npm test` prints (test/run-tests.js), so the closing
// line does not depend on Jest's JSON writer (which can fail on a test error it cannot serialise).

const fs = require('node:fs');

class CountReporter {
  onRunComplete(_contexts, results) {
    const file = process.env.SVC_TEST_COUNTS_FILE;
    if (!file) return;
    const counts = {
      passed: results.numPassedTests,
      // A suite that fails to load has no tests to count; count it as a failure so it cannot hide.
      failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
      skipped: results.numPendingTests + results.numTodoTests,
      // Each file's own time (start to end of its tests), for the "slowest files" lines of `npm test`.
      files: results.testResults.map((suite) => ({
        file: suite.testFilePath.slice(process.cwd().length + 1),
        ms: suite.perfStats && suite.perfStats.end > 0 ? suite.perfStats.end - suite.perfStats.start : 0,
      })),
      skippedTests: results.testResults.flatMap((suite) =>
        suite.testResults
          .filter((test) => test.status === 'pending' || test.status === 'todo' || test.status === 'skipped')
          .map((test) => `${suite.testFilePath.slice(process.cwd().length + 1)}: ${test.fullName}`),
      ),
    };
    fs.writeFileSync(file, JSON.stringify(counts));
  }
}

module.exports = CountReporter;
