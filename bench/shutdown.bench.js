#!/usr/bin/env node
'use strict';
// Row: `svc serve` exit time after SIGTERM with a webhook output whose target never answers (a
// delivery hanging) and 20 sockets holding an `Upgrade` request with an unread body, against the
// same svc build idle, alternately in one run; goal: the hostile exit within 2 s
// (docs/limits-and-load.md "Shutdown"). The goal used to be asserted by test/cli/shutdown-hostile.test.ts
// and test/integration/load/shutdown.test.ts, which now assert the outcome (exit 0, nothing lost).
//
// Usage: npm run build && node bench/shutdown.bench.js   (BENCH_ROUNDS rounds of each, default 5)
// Loopback only; bounded in time; diagnostics on stderr; JSON rows on stdout.

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { startSvc } = require('./lib/svc-process');
const { alternate, emitFailure, emitRow, envInt, log } = require('./lib/report');

const ROW = 'svc serve: SIGTERM to exit, a hanging delivery and 20 held upgrade sockets (ms)';
const GOAL = '< 2000';
const HELD_SOCKETS = 20;
const EXIT_LIMIT_MS = 30_000;

/** A loopback server that accepts and never answers: the webhook target that hangs. */
function blackHole() {
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/hook`,
        close: () => {
          for (const socket of sockets) socket.destroy();
          return new Promise((done) => server.close(() => done()));
        },
      }),
    ),
  );
}

function exitTime(child) {
  return new Promise((resolve, reject) => {
    const limit = setTimeout(() => reject(new Error(`svc serve still running ${EXIT_LIMIT_MS} ms after SIGTERM`)), EXIT_LIMIT_MS);
    const started = performance.now();
    child.once('exit', () => {
      clearTimeout(limit);
      resolve(performance.now() - started);
    });
    child.kill('SIGTERM');
  });
}

async function idleExit() {
  const svc = await startSvc();
  await fetch(`${svc.url}/v1/remoteinput?artist=A&title=Idle`);
  const ms = await exitTime(svc.child);
  await svc.stop();
  return ms;
}

async function hostileExit(hole, configDir) {
  const config = path.join(configDir, 'svc.json');
  fs.writeFileSync(config, JSON.stringify({ outputs: [{ name: 'hook', type: 'webhook', url: hole.url, secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}` }] }));
  const svc = await startSvc({ args: ['--config', config] });
  const { port } = new URL(svc.url);
  const held = [];
  for (let index = 0; index < HELD_SOCKETS; index++) {
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /v1/nothing HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 200000\r\n\r\n');
    socket.write(Buffer.alloc(100_000, 0x61));
    held.push(socket);
  }
  await fetch(`${svc.url}/v1/remoteinput?artist=A&title=Held`);
  try {
    return await exitTime(svc.child);
  } finally {
    for (const socket of held) socket.destroy();
    await svc.stop();
  }
}

async function main() {
  const rounds = envInt('BENCH_ROUNDS', 5);
  const hole = await blackHole();
  const configDir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'svc-bench-shutdown-'));
  try {
    const samples = await alternate(rounds, { hostile: () => hostileExit(hole, configDir), idle: idleExit });
    log(`shutdown: hostile ${samples.hostile.map((ms) => ms.toFixed(0)).join(', ')} ms; idle ${samples.idle.map((ms) => ms.toFixed(0)).join(', ')} ms`);
    emitRow({ row: ROW, unit: 'ms', svc: samples.hostile, baseline: { label: 'the same svc idle, SIGTERM to exit', values: samples.idle }, goal: GOAL });
  } catch (error) {
    emitFailure(ROW, error, 'ms');
  } finally {
    await hole.close();
    fs.rmSync(configDir, { recursive: true, force: true });
  }
}

main();
