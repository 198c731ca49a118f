'use strict';
// Server-Sent Events (docs/chat-bots-and-obs.md "Server-Sent Events"): GET /v1/events fan-out.
// 1,000 readers connected (their own process, bench/lib/sse-clients.js, from four loopback
// addresses); time from sending a submission to the LAST reader receiving its `track` event,
// p99 over 50 changes per round (goal < 100 ms), shown beside the submission's own round trip;
// and svc's resident memory with the 1,000 readers (goal < 150 MiB), shown beside the same
// process before they connected.

const path = require('node:path');
const { startSvc } = require('./lib/svc-process');
const { spawnPinned, CPU } = require('./lib/processes');
const { connectFleet } = require('./lib/ws-fleet');
const { rssBytes, MiB } = require('./lib/rss');
const { emitRow, emitFailure, log, envInt } = require('./lib/report');
const { timedPoster, percentile } = require('./lib/timed-post');

const CLIENTS = envInt('BENCH_SSE_CLIENTS', 1000);
const CHANGES_PER_ROUND = 50;
const ROUNDS = envInt('BENCH_ROUNDS', 3);
const ROW_P99 = `/v1/events fan-out to ${CLIENTS} readers, p99 submission to last reader`;
const ROW_RSS = `/v1/events: svc RSS with ${CLIENTS} readers`;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const post = timedPoster();



async function main() {
  const svc = await startSvc();
  let fleet;
  try {
    await sleep(500);
    const idleRss = rssBytes(svc.pid) / MiB;
    fleet = await connectFleet(spawnPinned(CPU.load, process.execPath, [path.join(__dirname, 'lib', 'sse-clients.js'), `${svc.url}/v1/events`, String(CLIENTS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    log(`svc ${svc.url} (pid ${svc.pid}): ${CLIENTS} readers connected`);
    const p99s = [];
    const roundTrips = [];
    const rss = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const latencies = [];
      const trips = [];
      for (let i = 0; i < CHANGES_PER_ROUND; i += 1) {
        const answer = await post(`${svc.url}/v1/remoteinput`, JSON.stringify({ artist: 'Fan-out', title: `Round ${round} change ${i}`, album: 'Bench' }));
        const last = await fleet.received(answer.body.dbid);
        latencies.push(last - answer.sent);
        trips.push(answer.at - answer.sent);
      }
      p99s.push(percentile(latencies, 99));
      roundTrips.push(percentile(trips, 99));
      rss.push(rssBytes(svc.pid) / MiB);
      log(`round ${round + 1}: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${p99s.at(-1).toFixed(1)} ms to the last reader; submission p99 ${roundTrips.at(-1).toFixed(1)} ms; RSS ${rss.at(-1).toFixed(1)} MiB`);
    }
    emitRow({ row: ROW_P99, unit: 'ms', svc: p99s, baseline: { label: 'the submission round trip alone (p99)', values: roundTrips }, goal: '< 100 ms' });
    emitRow({ row: ROW_RSS, unit: 'MiB', svc: rss, baseline: { label: 'the same svc before the readers connected', values: [idleRss] }, goal: '< 150 MiB' });
  } finally {
    fleet?.stop();
    await svc.stop();
  }
}

main().catch((error) => {
  log(error.stack ?? String(error));
  emitFailure(ROW_P99, error, 'ms');
  process.exitCode = 1;
});
