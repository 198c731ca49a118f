'use strict';
// /v1/images/ws: resident memory (VmRSS) of svc while 40 request/response clients each ask six
// times for an 8 MiB image and then stop reading. Answers are produced only as each socket
// drains (one fragment at a time), so the server should hold about one fragment per reader,
// never 40 x 6 whole base64 replies (that would be about 2.7 GB). The baseline is the same svc,
// idle with the image stored, measured just before the readers connect.
//
//   node bench/images-ws-paused.bench.js

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { setTimeout: sleep } = require('node:timers/promises');
const { WebSocket } = require(path.join(__dirname, '..', 'node_modules', 'ws'));
const { startSvc } = require('./lib/svc-process');
const { assertLoopbackUrl } = require('./lib/loopback');
const { emitRow, emitFailure, log, envInt } = require('./lib/report');
const { procMemory, MiB } = require('./lib/rss');

const ROUNDS = envInt('BENCH_PAUSED_ROUNDS', 3);
const READERS = 40;
const ASKS_PER_READER = 6;
const IMAGE_BYTES = 8 * MiB;
const SETTLE_MS = 2000;
const ROW = `RSS with ${READERS} paused readers of an 8 MiB image (x${ASKS_PER_READER} each)`;

/** A JPEG-prefixed payload: svc recognises images by their first bytes. */
function bigImage() {
  const bytes = randomBytes(IMAGE_BYTES);
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01]).copy(bytes);
  return bytes;
}

async function imageHost(bytes) {
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': bytes.length }).end(bytes);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/cover.jpg`, close: () => new Promise((resolve) => server.close(resolve)) };
}

function openPausedReader(url) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    socket.once('error', reject);
    socket.once('open', () => {
      socket.send(JSON.stringify({ type: 'hello' }));
      // Stop reading, then ask: the answers pile up on the server's side only.
      socket.pause();
      for (let i = 0; i < ASKS_PER_READER; i += 1) {
        socket.send(JSON.stringify({ type: 'get_images', data_type: 'album', category: 'cover', parameters: { artist: 'Bench Artist', album: 'Bench Album' } }));
      }
      resolve(socket);
    });
  });
}

async function measureRound(round, host) {
  const configFile = path.join(fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'svc-bench-cfg-')), 'svc.json');
  fs.writeFileSync(configFile, JSON.stringify({ coverFetch: { allowPrivateAddresses: true } }));
  const svc = await startSvc({ args: ['--config', configFile] });
  const readers = [];
  try {
    assertLoopbackUrl(svc.url);
    const res = await fetch(`${svc.url}/v1/remoteinput`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ artist: 'Bench Artist', title: 'Bench Title', album: 'Bench Album', coverurl: host.url }),
    });
    const body = await res.json();
    if (!String(body.processed_metadata?.coverurl ?? '').startsWith('cover/')) throw new Error(`the cover was not stored: ${JSON.stringify(body)}`);
    await sleep(SETTLE_MS);
    const idle = procMemory(svc.pid).rss;
    const wsUrl = `${svc.url.replace(/^http/, 'ws')}/v1/images/ws`;
    for (let i = 0; i < READERS; i += 1) readers.push(await openPausedReader(wsUrl));
    await sleep(SETTLE_MS);
    const paused = procMemory(svc.pid);
    const open = readers.filter((socket) => socket.readyState === WebSocket.OPEN).length;
    if (open !== READERS) throw new Error(`${READERS - open} of ${READERS} paused readers were closed`);
    log(`round ${round + 1}: idle ${mib(idle)} MiB, with ${READERS} paused readers ${mib(paused.rss)} MiB (peak ${mib(paused.hwm)} MiB)`);
    return { idle, paused: paused.rss };
  } finally {
    for (const socket of readers) socket.terminate();
    await svc.stop();
    fs.rmSync(path.dirname(configFile), { recursive: true, force: true });
  }
}

function mib(bytes) {
  return Math.round((bytes / MiB) * 10) / 10;
}

async function main() {
  const host = await imageHost(bigImage());
  try {
    const samples = [];
    for (let round = 0; round < ROUNDS; round += 1) samples.push(await measureRound(round, host));
    emitRow({
      row: ROW,
      unit: 'MiB',
      svc: samples.map((s) => mib(s.paused)),
      baseline: { label: 'the same svc, idle, image stored', values: samples.map((s) => mib(s.idle)) },
      // Whole replies held for every reader would be ~2.7 GB; a fragment each is a few tens of MiB.
      goal: '<= 1.5',
    });
  } catch (error) {
    emitFailure(ROW, error, 'MiB');
    process.exitCode = 1;
  } finally {
    await host.close();
  }
}

main();
