'use strict';
// Starts bench/lib/baseline-server.js as its own process, answering fixed bytes.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { assertLoopbackUrl } = require('./loopback');
const { CPU, spawnPinned, stopProcess, waitForListening, removeOnExit } = require('./processes');

/**
 * @param {{status?: number, headers: Record<string,string>, body: string}} response
 * @param {{cpu?: string|undefined, nodeArgs?: string[]}} [options]
 */
async function startBaseline(response, options = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-baseline-'));
  removeOnExit(dir);
  const specFile = path.join(dir, 'response.json');
  fs.writeFileSync(specFile, JSON.stringify(response));
  const child = spawnPinned('cpu' in options ? options.cpu : CPU.server, process.execPath, [
    ...(options.nodeArgs ?? []),
    path.join(__dirname, 'baseline-server.js'),
    specFile,
  ], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
  let url;
  try {
    url = await waitForListening(child, { describe: 'baseline server' });
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let stopped = null;
  const stop = () => {
    stopped ??= stopProcess(child).then((code) => {
      fs.rmSync(dir, { recursive: true, force: true });
      return code;
    });
    return stopped;
  };
  return { url, pid: child.pid, child, stop };
}

/**
 * Fetches `url` once and returns what a baseline needs to answer the same bytes: status, body,
 * and every response header except the ones node:http writes itself (date, connection,
 * keep-alive, transfer-encoding, content-length).
 */
async function captureResponse(url, init) {
  assertLoopbackUrl(url);
  const response = await fetch(url, init);
  const body = await response.text();
  const headers = {};
  const automatic = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);
  response.headers.forEach((value, name) => {
    if (!automatic.has(name)) headers[name] = value;
  });
  return { status: response.status, headers, body };
}

module.exports = { startBaseline, captureResponse };
