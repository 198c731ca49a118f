'use strict';
// A fleet of WebSocket clients in its own process (so client work never loads the server):
//   node bench/lib/ws-clients.js <ws-url> <count>
// Connects <count> clients, says {type:'ready'} over IPC, then for every frame that all <count>
// clients have received reports {type:'all-received', dbid, last, frame} with the arrival time of
// the last one and the frame's text (ms, performance.timeOrigin + performance.now(), comparable across processes).
// 'stop' over IPC closes everything.

const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { WebSocket } = require(path.join(__dirname, '..', '..', 'node_modules', 'ws'));

const [url, countText] = process.argv.slice(2);
const count = Number(countText);
if (!/^wss?:\/\/(127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?\//.test(url ?? '')) throw new Error(`loopback only, got ${url}`);

const seen = new Map(); // dbid -> { count, last }
const sockets = [];

function onFrame(data) {
  const at = performance.timeOrigin + performance.now();
  const text = String(data);
  const match = /"dbid":(\d+)/.exec(text);
  if (!match) return;
  const dbid = Number(match[1]);
  const entry = seen.get(dbid) ?? { count: 0, last: 0, text };
  entry.count += 1;
  entry.last = at;
  seen.set(dbid, entry);
  if (entry.count === count) {
    seen.delete(dbid);
    process.send({ type: 'all-received', dbid, last: entry.last, frame: entry.text });
  }
}

// svc caps connections per client address (limits.maxConnectionsPerAddress, 512): the fleet
// comes from 127.0.0.1-127.0.0.4 (Linux routes all of 127/8 to lo), as separate viewers would.
// A larger audience (10,000) comes from more of them: the optional third argument says how many.
const LOCAL_ADDRESSES = Array.from({ length: Number(process.argv[4]) || 4 }, (_, i) => `127.0.0.${i + 1}`);
let connected = 0;

function connectOne() {
  return new Promise((resolve, reject) => {
    const localAddress = LOCAL_ADDRESSES[connected++ % LOCAL_ADDRESSES.length];
    const socket = new WebSocket(url, { perMessageDeflate: false, localAddress });
    socket.on('message', onFrame);
    socket.once('open', () => {
      // Ask for the push stream at once, as svc's own pages do (svc waits 0.5 s otherwise).
      socket.send('{"type":"subscribe"}');
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

(async () => {
  for (let done = 0; done < count; done += 100) {
    sockets.push(...(await Promise.all(Array.from({ length: Math.min(100, count - done) }, connectOne))));
  }
  process.send({ type: 'ready', connected: sockets.length });
})().catch((error) => {
  process.send({ type: 'failed', message: error.message });
  process.exit(1);
});

process.on('message', (message) => {
  if (message !== 'stop') return;
  for (const socket of sockets) socket.terminate();
  process.exit(0);
});
process.on('disconnect', () => process.exit(0));
