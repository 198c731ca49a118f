'use strict';
// Starts the real `svc serve` (bin/svc.js, built dist/) as its own process: port 0, loopback,
// a fresh SQLite file in a temp dir, --offline (no outbound lookups) unless told otherwise.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { CPU, spawnPinned, stopProcess, waitForListening, removeOnExit } = require('./processes');

const ROOT = path.resolve(__dirname, '..', '..');
const SVC_BIN = path.join(ROOT, 'bin', 'svc.js');

/**
 * @param {object} [options]
 * @param {string[]} [options.args]      extra `svc serve` arguments
 * @param {string[]} [options.nodeArgs]  node flags, e.g. ['--cpu-prof', '--cpu-prof-dir=DIR']
 * @param {boolean}  [options.offline]   pass --offline (default true)
 * @param {string}   [options.dbFile]    database file (default: svc.db in a new temp dir)
 * @param {object}   [options.env]       extra environment
 * @param {string|undefined} [options.cpu]  CPU to pin to (default CPU.server; undefined = no pinning)
 * @param {boolean}  [options.keepDir]   keep the temp dir after stop()
 * @returns {Promise<{url: string, pid: number, dbFile: string, dir: string, logFile: string, child: import('node:child_process').ChildProcess, stop: () => Promise<number|null>}>}
 */
async function startSvc(options = {}) {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first (`npm run bench` does)');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  // Also when the bench file is stopped mid-run (time budget, Ctrl-C); keepDir hands it to the caller.
  const cleanup = removeOnExit(dir);
  const dbFile = options.dbFile ?? path.join(dir, 'svc.db');
  // The access log (one line per request) goes to a file: cheap to write, never blocks on a
  // full pipe, and its tail explains a failed start.
  const logFile = path.join(dir, 'svc.stderr.log');
  const logFd = fs.openSync(logFile, 'w');
  const args = [
    ...(options.nodeArgs ?? []),
    options.bin ?? SVC_BIN,
    'serve',
    '--port', '0',
    '--host', '127.0.0.1',
    '--db', dbFile,
    ...(options.offline === false ? [] : ['--offline']),
    ...(options.args ?? []),
  ];
  const child = spawnPinned('cpu' in options ? options.cpu : CPU.server, process.execPath, args, {
    // A temp cwd: no .svcrc from the checkout or the developer's directory changes the config.
    cwd: dir,
    env: { ...cleanEnv(), ...(options.env ?? {}) },
    stdio: ['ignore', 'pipe', logFd],
  });
  fs.closeSync(logFd);

  let url;
  try {
    url = await waitForListening(child, { describe: 'svc serve', stderrTail: () => tail(logFile) });
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  let stopped = null;
  const stop = () => {
    stopped ??= stopProcess(child).then((code) => {
      if (options.keepDir) cleanup.forget();
      else fs.rmSync(dir, { recursive: true, force: true });
      return code;
    });
    return stopped;
  };
  return { url, pid: child.pid, dbFile, dir, logFile, child, stop };
}

/** The parent environment without SVC_* variables, which would override the bench's flags. */
function cleanEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('SVC_')) delete env[key];
  env.NO_COLOR = '1';
  return env;
}

function tail(file, lines = 5) {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join(' | ');
  } catch {
    return '';
  }
}

module.exports = { startSvc, SVC_BIN, ROOT };
