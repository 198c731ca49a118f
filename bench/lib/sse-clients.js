'use strict';
// A fleet of Server-Sent Events readers of /v1/events in its own process (so client work never
// loads the server):  node bench/lib/sse-clients.js <http-url> <count>
// Opens <count> streams, says {type:'ready'} over IPC once each has its opening `retry:`, then
// for every event id that all <count> readers have received reports {type:'all-received',
// dbid, last, frame} (frame: the event block as read) with the arrival time of the last one (ms, performance.timeOrigin +
// performance.now(), comparable across processes). 'stop' over IPC closes everything.

const http = require('node:http');
const { performance } = require('node:perf_hooks');

const [url, countText] = process.argv.slice(2);
const count = Number(countText);
if (!/^http:\/\/(127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?\//.test(url ?? '')) throw new Error(`loopback only, got ${url}`);
const target = new URL(url);

const seen = new Map(); // dbid -> { count, last }
const requests = [];

function onEventId(dbid, block) {
  const at = performance.timeOrigin + performance.now();
  const entry = seen.get(dbid) ?? { count: 0, last: 0, text: `${block}\n\n` };
  entry.count += 1;
  entry.last = at;
  seen.set(dbid, entry);
  if (entry.count === count) {
    seen.delete(dbid);
    process.send({ type: 'all-received', dbid, last: entry.last, frame: entry.text });
  }
}

// svc caps connections per client address (limits.maxConnectionsPerAddress, 512): the fleet
// comes from 127.0.0.1-127.0.0.4, as separate viewers would.
// A larger audience (10,000) comes from more of them: the optional third argument says how many.
const LOCAL_ADDRESSES = Array.from({ length: Number(process.argv[4]) || 4 }, (_, i) => `127.0.0.${i + 1}`);
let opened = 0;

function openOne() {
  return new Promise((resolve, reject) => {
    const localAddress = LOCAL_ADDRESSES[opened++ % LOCAL_ADDRESSES.length];
    const request = http.get({ host: target.hostname, port: target.port, path: target.pathname + target.search, localAddress, agent: false }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`GET /v1/events answered ${response.statusCode}`));
      response.setEncoding('utf8');
      let buffer = '';
      let ready = false;
      response.on('data', (chunk) => {
        buffer += chunk;
        // Events end with an empty line; only their `id:` matters here.
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!ready && block.startsWith('retry:')) {
            ready = true;
            resolve(request);
          }
          const id = /^id: (\d+)$/m.exec(block);
          if (id) onEventId(Number(id[1]), block);
          end = buffer.indexOf('\n\n');
        }
      });
    });
    request.once('error', reject);
  });
}

(async () => {
  for (let done = 0; done < count; done += 100) {
    requests.push(...(await Promise.all(Array.from({ length: Math.min(100, count - done) }, openOne))));
  }
  process.send({ type: 'ready', connected: requests.length });
})().catch((error) => {
  process.send({ type: 'failed', message: error.message });
  process.exit(1);
});

process.on('message', (message) => {
  if (message === 'stop') {
    for (const request of requests) request.destroy();
    process.exit(0);
  }
});
