'use strict';
// Child processes of a bench file: started pinned to a CPU when possible, tracked so that none
// outlives the bench file, and stopped by their own pid.

const fs = require('node:fs');
const { spawn, spawnSync } = require('node:child_process');
const { assertLoopbackUrl } = require('./loopback');

const live = new Set();
const tempDirs = new Set();
let exitHooksInstalled = false;

/**
 * CPU pinning: on a 2-core machine the server under test runs on CPU 0 and the load generator on
 * CPU 1, so they never compete for a core and svc and its baseline get identical treatment.
 * BENCH_PIN=0 turns it off (e.g. on a 1-core machine).
 */
const CPU = { server: '0', load: '1' };
let tasksetAvailable;
function canPin() {
  if (process.env.BENCH_PIN === '0') return false;
  if (tasksetAvailable === undefined) {
    const cpus = require('node:os').availableParallelism();
    tasksetAvailable = cpus >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  }
  return tasksetAvailable;
}

/** spawn(), through `taskset -c <cpu>` when pinning is possible; taskset execs, so the pid is the command's. */
function spawnPinned(cpu, command, args, options) {
  const child = cpu !== undefined && canPin() ? spawn('taskset', ['-c', cpu, command, ...args], options) : spawn(command, args, options);
  track(child);
  return child;
}

/**
 * Pins this process (every thread) to `cpu`, when pinning is possible: for a bench file that is
 * itself the load generator and times answers, so that it never runs on the server's CPU.
 */
function pinSelf(cpu) {
  if (canPin()) spawnSync('taskset', ['-a', '-p', '-c', cpu, String(process.pid)], { stdio: 'ignore' });
}

function track(child) {
  installExitHooks();
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

function installExitHooks() {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  // A bench file stopped by run.js (time budget) or by Ctrl-C must not leave servers behind.
  process.once('exit', killAllTracked);
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      killAllTracked();
      process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
    });
  }
}

function killAllTracked() {
  for (const child of live) {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** Removes `dir` when the bench file exits or is stopped, unless `forget(dir)` was called first. */
function removeOnExit(dir) {
  installExitHooks();
  tempDirs.add(dir);
  return { forget: () => tempDirs.delete(dir) };
}

/** Resolves when `child` has exited; SIGTERM first, SIGKILL after `graceMs`. */
function stopProcess(child, graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

/**
 * Waits until `child` prints "listening on <url>" on stdout and returns the URL (checked to be
 * loopback). Keeps draining stdout afterwards so the child never blocks on a full pipe.
 */
function waitForListening(child, { timeoutMs = 15_000, describe = 'process', stderrTail = () => '' } = {}) {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const fail = (message) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      const tail = stderrTail();
      reject(new Error(`${describe} ${message}${tail ? `: ${tail}` : ''}`));
    };
    const timer = setTimeout(() => fail(`did not print "listening on" within ${timeoutMs} ms`), timeoutMs);
    const onExit = (code, signal) => fail(`exited (${signal ?? code}) before listening`);
    child.once('exit', onExit);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', function onData(chunk) {
      stdout += chunk;
      const match = /listening on (\S+)/.exec(stdout);
      if (!match) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      child.stdout.off('data', onData);
      child.stdout.resume();
      try {
        assertLoopbackUrl(match[1]);
      } catch (error) {
        child.kill('SIGKILL');
        reject(error);
        return;
      }
      resolve(match[1]);
    });
  });
}

module.exports = { CPU, canPin, pinSelf, spawnPinned, track, stopProcess, waitForListening, removeOnExit };
