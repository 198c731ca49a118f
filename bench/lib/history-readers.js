'use strict';
// The history-flood clients of attack-fairness.bench.js in their own process, pinned to the load
// CPU: 100 readers parsing 1 MiB pages (and a flood of 503s) would otherwise share an event loop
// with the /v1/last prober, and the prober would measure the readers, not the server.
//   node bench/lib/history-readers.js <base url> <readers> <seconds>
// Prints {"statuses": {...}} when done. Loopback only.

const http = require('node:http');

const [base, readersText, secondsText] = process.argv.slice(2);
const url = new URL(base);
if (!/^(127\.\d+\.\d+\.\d+|\[::1\])$/.test(url.hostname)) throw new Error(`loopback only, got ${base}`);
const readers = Number(readersText);
const until = Date.now() + Number(secondsText) * 1000;
const agent = new http.Agent({ keepAlive: true, maxSockets: readers });
const statuses = {};

function get(path) {
  return new Promise((resolve) => {
    const request = http.get({ host: url.hostname, port: url.port, path, agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode));
    });
    request.on('error', () => resolve('error'));
  });
}

async function reader(index) {
  while (Date.now() < until) {
    const status = await get(`/v1/history?limit=1000&before=${1000 - (index % 50)}`);
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
}

Promise.all(Array.from({ length: readers }, (_, index) => reader(index))).then(() => {
  agent.destroy();
  process.stdout.write(`${JSON.stringify({ statuses })}\n`);
});
