'use strict';
// Readers of /v1/events that all come back at once having missed the same records, in their own
// process:  node bench/lib/sse-catch-up.js <http-url> <count> <since> <until-dbid>
// Each opens `<url>/v1/events` with Last-Event-ID <since>; a 503 is retried after its
// Retry-After, a busy server's short stream after its `retry:`, and a stream that ends is reopened
// from the last id received, as EventSource does. Says {type:'done', refusals, ms} over IPC once every reader has the event <until-dbid>.

const http = require('node:http');

const [url, countText, sinceText, untilText] = process.argv.slice(2);
if (!/^http:\/\/(127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?\//.test(url ?? '')) throw new Error(`loopback only, got ${url}`);
const target = new URL(url);
const count = Number(countText);
const until = Number(untilText);
const LOCAL_ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'];
const started = Date.now();
let refusals = 0;
let finished = 0;
const requests = new Set();

function follow(index, lastId) {
  const request = http.get(
    { host: target.hostname, port: target.port, path: target.pathname, localAddress: LOCAL_ADDRESSES[index % LOCAL_ADDRESSES.length], agent: false, headers: { 'Last-Event-ID': String(lastId) } },
    (response) => {
      if (response.statusCode !== 200) {
        refusals += 1;
        response.resume();
        const wait = Number(response.headers['retry-after'] ?? 1) * 1000;
        setTimeout(() => follow(index, lastId), wait);
        return;
      }
      response.setEncoding('utf8');
      let buffer = '';
      let done = false;
      // A busy server's short stream (src/server/sse/frames.ts busyAnswer): back after its `retry:`.
      let busyRetry = 0;
      response.on('data', (chunk) => {
        buffer += chunk;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          const retry = /^retry: (\d+)$/m.exec(block);
          if (retry) busyRetry = Number(retry[1]);
          if (/^event: busy$/m.test(block)) refusals += 1;
          else if (!retry) busyRetry = 0;
          const id = /^id: (\d+)$/m.exec(block);
          buffer = buffer.slice(end + 2);
          if (id) lastId = Number(id[1]);
          if (!done && lastId >= until) {
            done = true;
            finished += 1;
            if (finished === count) process.send({ type: 'done', refusals, ms: Date.now() - started });
          }
          end = buffer.indexOf('\n\n');
        }
      });
      response.on('end', () => {
        requests.delete(request);
        if (!done) setTimeout(() => follow(index, lastId), busyRetry);
      });
    },
  );
  requests.add(request);
  request.on('error', () => setTimeout(() => follow(index, lastId), 200));
}

for (let index = 0; index < count; index += 1) follow(index, Number(sinceText));

process.on('message', (message) => {
  if (message === 'stop') {
    for (const request of requests) request.destroy();
    process.exit(0);
  }
});
