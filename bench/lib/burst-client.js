'use strict';
// The cover-burst client of instances.bench.js, in its own process pinned to the load CPU (so
// the 1,000 replies it parses never take CPU from the server under test). Driven over IPC:
//   {type: 'warm', base}            opens BURST keep-alive connections to `base` (one GET
//                                   /v1/status each) and keeps them: overlays poll or stream, so
//                                   they already hold a connection when the cover changes
//   {type: 'burst', base, path, cold}  BURST GETs of `path` at once, on the warm connections
//                                   (cold: false) or each on a new connection (cold: true)
// Answers {type: 'done', id, times, reused} (times in ms, reused = requests that went out on an
// already open connection) or {type: 'failed', id, message}.
//   node bench/lib/burst-client.js <count>

const http = require('node:http');
const { performance } = require('node:perf_hooks');

const BURST = Number(process.argv[2]);
const agents = new Map();

function agentFor(base) {
  let agent = agents.get(base);
  if (!agent) {
    // lifo is the default scheduling; maxSockets = BURST so every request of a burst has its own connection.
    agent = new http.Agent({ keepAlive: true, maxSockets: BURST, maxFreeSockets: BURST, keepAliveMsecs: 1000 });
    agents.set(base, agent);
  }
  return agent;
}

function assertLoopback(url) {
  if (!/^http:\/\/(127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?\//.test(url)) throw new Error(`loopback only, got ${url}`);
}

/** One GET; resolves with its time in ms and whether it reused a connection. The body is counted, not kept. */
function get(url, agent) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.get(url, { agent }, (res) => {
      let bytes = 0;
      res.on('data', (chunk) => {
        bytes += chunk.length;
      });
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`${url} answered ${res.statusCode}`));
        else resolve({ ms: performance.now() - started, reused: req.reusedSocket, bytes });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

async function handle(message) {
  const url = `${message.base}${message.path ?? '/v1/status'}`;
  assertLoopback(url);
  if (message.type === 'warm') {
    const agent = agentFor(message.base);
    // A connection svc closed as idle just as it was reused answers "socket hang up": once more on a new one.
    await Promise.all(Array.from({ length: BURST }, () => get(url, agent).catch(() => get(url, agent))));
    return { times: [], reused: 0, open: Object.values(agent.freeSockets).reduce((sum, list) => sum + list.length, 0) };
  }
  // agent: false is a new connection per request, closed after it (Connection: close).
  const agent = message.cold ? false : agentFor(message.base);
  const results = await Promise.all(Array.from({ length: BURST }, () => get(url, agent)));
  return { times: results.map((r) => r.ms), reused: results.filter((r) => r.reused).length };
}

process.on('message', (message) => {
  if (message === 'stop') {
    for (const agent of agents.values()) agent.destroy();
    process.exit(0);
  }
  handle(message).then(
    (result) => process.send({ type: 'done', id: message.id, ...result }),
    (error) => process.send({ type: 'failed', id: message.id, message: String(error.message ?? error) }),
  );
});
process.send({ type: 'ready' });
