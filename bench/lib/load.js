'use strict';
// runLoad(): one autocannon run in its own process (bench/lib/load-worker.js), pinned to the
// load CPU, bounded in time, against a loopback URL. Returns the worker's JSON result.

const path = require('node:path');
const { assertLoopbackUrl } = require('./loopback');
const { CPU, spawnPinned } = require('./processes');

/**
 * @param {object} options  autocannon options: url, connections, duration (s) or amount,
 *   method, headers, body, idReplacement, ... (see node_modules/autocannon/README.md)
 * @param {{cpu?: string|undefined, timeoutMs?: number}} [limits]
 * @returns {Promise<{requestsPerSecond: number, duration: number, completed: number, sent: number,
 *   '2xx': number, non2xx: number, errors: number, timeouts: number,
 *   latency: {average: number, p50: number, p90: number, p99: number, max: number}}>}
 */
function runLoad(options, limits = {}) {
  assertLoopbackUrl(options.url);
  const timeoutMs = limits.timeoutMs ?? (options.duration ? options.duration * 1000 + 15_000 : 60_000);
  const worker = spawnPinned('cpu' in limits ? limits.cpu : CPU.load, process.execPath, [path.join(__dirname, 'load-worker.js')], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  worker.stdin.end(JSON.stringify(options));
  let stdout = '';
  let stderr = '';
  worker.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  worker.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      worker.kill('SIGKILL');
      reject(new Error(`load run against ${options.url} exceeded ${timeoutMs} ms`));
    }, timeoutMs);
    worker.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`load worker failed (${signal ?? code}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
        return;
      }
      try {
        resolve(JSON.parse(stdout));
      } catch (error) {
        reject(new Error(`load worker printed no JSON: ${stdout.slice(0, 200)}`));
      }
    });
  });
}

/** Throws when a run saw connection errors, timeouts or unexpected statuses: its figures would lie. */
function assertCleanRun(result, label) {
  const problems = [];
  if (result.errors > 0) problems.push(`${result.errors} errors`);
  if (result.timeouts > 0) problems.push(`${result.timeouts} timeouts`);
  if (result.non2xx > 0) problems.push(`${result.non2xx} non-2xx responses ${JSON.stringify(result.statusCodeStats)}`);
  if (result.completed === 0) problems.push('no responses');
  if (problems.length > 0) throw new Error(`${label}: ${problems.join(', ')}`);
  return result;
}

module.exports = { runLoad, assertCleanRun };
