'use strict';
// Push at audience scale (docs/limits-and-load.md "Fan-out at audience scale"). Rows:
// 1. For 1,000, 5,000 and 10,000 clients of /v1/images/ws and of /v1/events: the time from
//    sending a change to the LAST client receiving it, p50 and p99 per round of changes, svc
//    against a bare node:http + `ws` process broadcasting the very same bytes
//    (bench/lib/audience-broadcaster.js), same run, alternating. Goal <= 1.5 at every size.
// 2. POST /v1/remoteinput latency (median of each round) on svc with 3,000 /v1/images/ws
//    subscribers against the same svc build with none: each POST once every client has the
//    previous change (goal <= 1.3), and, shown beside it, each POST 5 ms after the previous
//    answer, so most arrive while the previous change is still being pushed.
// 3. RSS per 1,000 idle clients (the growth while the largest audience connects to a server that
//    has had no client yet, per 1,000), svc against the broadcaster. Goal <= 1.3.
// With BENCH_BEFORE_ROOT (a built checkout of the code before), that code runs as a third
// contender in the same rounds; its figures are in each row's details.
// Servers are pinned to CPU 0, the client fleets (one process per server, bench/lib/ws-clients.js
// and sse-clients.js) and this driver to CPU 1. 10,000 clients come from 25 loopback addresses
// (limits.maxConnectionsPerAddress is 512); svc's limits.maxConnections is raised past 10,000 so
// the driver's own connection fits beside them; the open-files limit is raised to its hard limit.
//   npm run build && node bench/audience.bench.js

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { startSvc } = require('./lib/svc-process');
const { CPU, pinSelf, spawnPinned, waitForListening, stopProcess } = require('./lib/processes');
const { connectFleet } = require('./lib/ws-fleet');
const { rssBytes, MiB } = require('./lib/rss');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { timedPoster, percentile } = require('./lib/timed-post');

const SIZES = (process.env.BENCH_AUDIENCE_SIZES || '1000,5000,10000').split(',').map(Number);
const KINDS = (process.env.BENCH_AUDIENCE_KINDS || 'ws,sse').split(',');
// Five rounds: a round's p99 is nearly its slowest of 20 changes, and with three rounds the
// median of those moved by more than the goal between runs on a quiet machine (2026-11-28).
const ROUNDS = envInt('BENCH_ROUNDS', 5);
const CHANGES_PER_ROUND = envInt('BENCH_AUDIENCE_CHANGES', 20);
const POST_SOCKETS = envInt('BENCH_LOCAL_SOCKETS', 3000);
const POSTS_PER_ROUND = 40;
const POST_ROUNDS = envInt('BENCH_POST_ROUNDS', 5);
const BEFORE_ROOT = process.env.BENCH_BEFORE_ROOT;
/** Which parts run: `rss`, `push`, `post` (BENCH_AUDIENCE_ROWS=post runs only the POST rows). */
const PARTS = (process.env.BENCH_AUDIENCE_ROWS || 'rss,push,post').split(',');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const KIND = {
  ws: { name: '/v1/images/ws', svcPath: '/v1/images/ws', basePath: '/ws', fleet: 'ws-clients.js', broadcast: '/broadcast/ws', scheme: 'ws' },
  sse: { name: '/v1/events', svcPath: '/v1/events', basePath: '/events', fleet: 'sse-clients.js', broadcast: '/broadcast/events', scheme: 'http' },
};
const rowName = (kind, size, p) => `${KIND[kind].name} push to ${size.toLocaleString('en-US')} clients, request sent -> last client ${p}`;
const ROW_POST = `POST /v1/remoteinput latency with ${POST_SOCKETS.toLocaleString('en-US')} /v1/images/ws sockets vs none (median)`;
const ROW_POST_MID = `POST /v1/remoteinput latency sent mid-push to ${POST_SOCKETS.toLocaleString('en-US')} /v1/images/ws sockets vs none (median)`;
const rowRss = (kind) => `RSS per 1,000 idle ${KIND[kind].name} clients`;

const post = timedPoster();

const median = (values) => percentile(values, 50);

async function startServers(dir) {
  const config = path.join(dir, 'audience.json');
  fs.writeFileSync(config, JSON.stringify({ limits: { maxConnections: 30_000 } }));
  const args = ['--config', config];
  const svc = await startSvc({ args });
  const before = BEFORE_ROOT ? await startSvc({ bin: path.join(BEFORE_ROOT, 'bin', 'svc.js'), args }) : null;
  const child = spawnPinned(CPU.server, process.execPath, [path.join(__dirname, 'lib', 'audience-broadcaster.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await waitForListening(child, { describe: 'audience broadcaster' });
  const broadcaster = { url, pid: child.pid, stop: () => stopProcess(child) };
  return { svc, before, broadcaster };
}

function startFleet(kind, url, size) {
  const addresses = Math.max(4, Math.ceil(size / 400));
  const script = path.join(__dirname, 'lib', KIND[kind].fleet);
  return connectFleet(
    spawnPinned(CPU.load, process.execPath, [script, url, String(size), String(addresses)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
}

const serverUrl = (kind, server, name) => `${server.url.replace(/^http/, KIND[kind].scheme)}${name === 'baseline' ? KIND[kind].basePath : KIND[kind].svcPath}`;

/**
 * Row 3, on servers that have had no client yet (a heap grown by an earlier audience would hide
 * the cost): connects `size` idle clients to each and reads how much its RSS grew, per 1,000.
 */
async function idleClientRss(kind, size, dir) {
  const servers = await startServers(dir);
  const perThousand = {};
  try {
    await sleep(1000);
    for (const name of ['svc', 'before', 'baseline']) {
      const server = name === 'baseline' ? servers.broadcaster : servers[name];
      if (!server) continue;
      const idle = rssBytes(server.pid);
      const fleet = await startFleet(kind, serverUrl(kind, server, name), size);
      await sleep(1500);
      perThousand[name] = ((rssBytes(server.pid) - idle) / MiB) * (1000 / size);
      fleet.stop();
    }
  } finally {
    await Promise.all([servers.svc.stop(), servers.before?.stop(), servers.broadcaster.stop()]);
  }
  log(
    `RSS per 1,000 idle ${KIND[kind].name} clients (${size} connected): ${Object.entries(perThousand)
      .map(([k, v]) => `${k} ${v.toFixed(2)} MiB`)
      .join(', ')}`,
  );
  emitRow({
    row: rowRss(kind),
    unit: 'MiB',
    svc: [perThousand.svc],
    baseline: { label: `the broadcaster's growth with the same ${size.toLocaleString('en-US')} clients, fresh processes`, values: [perThousand.baseline] },
    goal: '<= 1.3',
    details: perThousand.before === undefined ? undefined : { before: perThousand.before },
  });
}

/** One audience size of one kind: fleets on every server, alternating rounds of changes. */
async function measureAudience(kind, size, servers) {
  const { svc, before, broadcaster } = servers;
  const spec = KIND[kind];
  const fleets = {};
  const contenders = { svc, ...(before ? { before } : {}) };
  for (const [name, server] of Object.entries(contenders)) fleets[name] = await startFleet(kind, serverUrl(kind, server, name), size);
  fleets.baseline = await startFleet(kind, serverUrl(kind, broadcaster, 'baseline'), size);
  log(`${size} ${spec.name} clients on each server`);
  try {
    let sequence = 0;
    let baselineDbid = 1_000_000_000;
    const change = async (name) => {
      sequence += 1;
      if (name === 'baseline') {
        baselineDbid += 1;
        // The bytes svc sent for its last change, with the baseline's own id.
        const frame = fleets.svc.lastFrame.replace(/"dbid":\d+/g, `"dbid":${baselineDbid}`).replace(/^id: \d+$/m, `id: ${baselineDbid}`);
        const { sent } = await post(`${broadcaster.url}${spec.broadcast}`, frame);
        return (await fleets.baseline.received(baselineDbid, 30_000)) - sent;
      }
      const server = contenders[name];
      const body = JSON.stringify({ artist: 'Audience', title: `Change ${sequence}`, album: 'Scale', genre: 'House', date: '2001' });
      const { sent, body: answer } = await post(`${server.url}/v1/remoteinput`, body);
      return (await fleets[name].received(answer.dbid, 30_000)) - sent;
    };
    for (const name of Object.keys(contenders)) await change(name);
    await change('baseline');
    const round = (name) => async (index) => {
      const times = [];
      for (let i = 0; i < CHANGES_PER_ROUND; i += 1) {
        times.push(await change(name));
        await sleep(20);
      }
      log(`${spec.name} ${size} round ${index + 1} ${name}: p50 ${median(times).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms`);
      return { p50: median(times), p99: percentile(times, 99) };
    };
    const samples = await alternate(ROUNDS, Object.fromEntries(['svc', 'baseline', ...(before ? ['before'] : [])].map((name) => [name, round(name)])));
    for (const p of ['p50', 'p99']) {
      const details = { clients: size, changesPerRound: CHANGES_PER_ROUND };
      if (samples.before) {
        details.before = samples.before.map((r) => Math.round(r[p] * 10) / 10);
        details.beforeRatio = Math.round((median(details.before) / median(samples.baseline.map((r) => r[p]))) * 1000) / 1000;
      }
      emitRow({
        row: rowName(kind, size, p),
        unit: 'ms',
        svc: samples.svc.map((r) => r[p]),
        baseline: { label: `bare node:http + ws broadcaster, same bytes, ${size} clients`, values: samples.baseline.map((r) => r[p]) },
        goal: '<= 1.5',
        details,
      });
    }
  } finally {
    for (const fleet of Object.values(fleets)) fleet.stop();
    await sleep(1000);
  }
}

/**
 * The timing client shares the load CPU with the fleet, which reads the 3,000 frames that follow
 * each answer: at equal priority the client's reading of the answer itself waited for the fleet's
 * time slice (7 to 9 ms, with or without a push under way), which a POST from DJ software on its
 * own machine never sees; at a higher nice level it still waited for the running slice when the
 * answer woke it (the scheduler's wakeup granularity, about a millisecond on two cores). A
 * real-time priority for the driver's main thread alone, when allowed, lets it read the answer at
 * once. Set after the servers and the fleet are started: children inherit a scheduling policy.
 * Returns the undo.
 */
function prioritizeTimingClient() {
  const pid = String(process.pid);
  const raised = spawnSync('chrt', ['--fifo', '--pid', '10', pid], { encoding: 'utf8' });
  if (raised.status !== 0) {
    log(`cannot give the timing client a real-time priority (${(raised.stderr || raised.error?.message || '').trim()}): the POST rows include the scheduler's wait`);
    return () => undefined;
  }
  return () => spawnSync('chrt', ['--other', '--pid', '0', pid]);
}

/**
 * Row 2: POST latency with POST_SOCKETS subscribers against none. `after`: each POST once every
 * client has the previous change (the push is over); `mid`: each POST 5 ms after the previous
 * answer, so most arrive while the previous change is still being pushed.
 */
async function postLatency(dir) {
  const config = path.join(dir, 'post.json');
  fs.writeFileSync(config, JSON.stringify({ limits: { maxConnections: 30_000 } }));
  const builds = { svc: null, ...(BEFORE_ROOT ? { before: path.join(BEFORE_ROOT, 'bin', 'svc.js') } : {}) };
  const results = {};
  for (const [name, bin] of Object.entries(builds)) {
    const watched = await startSvc({ args: ['--config', config], ...(bin ? { bin } : {}) });
    const alone = await startSvc({ args: ['--config', config], ...(bin ? { bin } : {}) });
    const fleet = await startFleet('ws', `${watched.url.replace(/^http/, 'ws')}/v1/images/ws`, POST_SOCKETS);
    let sequence = 0;
    const restorePriority = prioritizeTimingClient();
    try {
      const round = (server, mode) => async () => {
        const times = [];
        let last;
        for (let i = 0; i < POSTS_PER_ROUND; i += 1) {
          sequence += 1;
          const { sent, at, body } = await post(`${server.url}/v1/remoteinput`, JSON.stringify({ artist: 'Latency', title: `Submission ${sequence}` }));
          times.push(at - sent);
          last = body.dbid;
          if (mode === 'mid' || server === alone) await sleep(5);
          else await fleet.received(last, 30_000);
        }
        if (server === watched) await fleet.received(last, 30_000);
        return median(times);
      };
      results[name] = await alternate(POST_ROUNDS, { after: round(watched, 'after'), mid: round(watched, 'mid'), without: round(alone, 'after') });
      results[name].server = { with: accessLogMedian(watched.logFile), without: accessLogMedian(alone.logFile) };
      for (const mode of ['after', 'mid', 'without'])
        log(
          `${name}: POST median, ${mode === 'without' ? 'no socket' : `${POST_SOCKETS} sockets, ${mode} push`}: ${results[name][mode].map((v) => v.toFixed(2)).join(', ')} ms`,
        );
    } finally {
      restorePriority();
      fleet.stop();
      await Promise.all([watched.stop(), alone.stop()]);
    }
  }
  for (const mode of ['after', 'mid']) {
    const before = results.before;
    // svc's own handling time of the same POSTs (its access log), with the sockets (both modes) and without.
    const details = { serverMs: results.svc.server };
    if (before)
      Object.assign(details, {
        before: before[mode],
        beforeWithout: before.without,
        beforeRatio: Math.round((median(before[mode]) / median(before.without)) * 1000) / 1000,
        beforeServerMs: before.server,
      });
    emitRow({
      row: mode === 'after' ? ROW_POST : ROW_POST_MID,
      unit: 'ms',
      svc: results.svc[mode],
      baseline: { label: 'the same POSTs to the same build with no socket, same run', values: results.svc.without },
      // Mid-push, a POST waits for the slice under way (about 1 ms) at each turn it takes: shown, not bounded.
      goal: mode === 'after' ? '<= 1.3' : null,
      details,
    });
  }
}

/** The median of svc's own milliseconds for POST /v1/remoteinput, from its access log. */
function accessLogMedian(logFile) {
  const times = fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('POST /v1/remoteinput 200'))
    .map((line) => Number(/ (\d+(?:\.\d+)?)ms /.exec(line)?.[1]))
    .filter((ms) => Number.isFinite(ms));
  return times.length ? Math.round(median(times) * 100) / 100 : null;
}

/** The open-files limit this run needs: every client's socket in a fleet, and in a server. */
function raiseFileLimitOrReexec() {
  const needed = Math.max(...SIZES) + 2000;
  const soft = Number(spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout.trim());
  if (!(soft < needed) || process.env.BENCH_AUDIENCE_REEXEC) return false;
  // A child shell raises its own soft limit to the hard one and runs this file again under it.
  const result = spawnSync('sh', ['-c', 'ulimit -n "$(ulimit -Hn)" && exec "$@"', 'sh', process.execPath, __filename], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_AUDIENCE_REEXEC: '1' },
  });
  process.exitCode = result.status ?? 1;
  return true;
}

async function main() {
  if (raiseFileLimitOrReexec()) return;
  pinSelf(CPU.load);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-audience-'));
  for (const kind of PARTS.includes('rss') ? KINDS : []) {
    try {
      await idleClientRss(kind, Math.max(...SIZES), dir);
    } catch (error) {
      log(error.stack ?? String(error));
      emitFailure(rowRss(kind), error, 'MiB');
    }
  }
  if (PARTS.includes('push')) await pushRows(dir);
  if (PARTS.includes('post')) {
    try {
      await postLatency(dir);
    } catch (error) {
      log(error.stack ?? String(error));
      emitFailure(ROW_POST, error, 'ms');
      emitFailure(ROW_POST_MID, error, 'ms');
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Row 1 for every kind and size, on one set of servers. */
async function pushRows(dir) {
  const servers = await startServers(dir);
  try {
    for (const kind of KINDS) {
      for (const size of SIZES) {
        try {
          await measureAudience(kind, size, servers);
        } catch (error) {
          log(`${kind} ${size}: ${error.stack ?? error}`);
          for (const p of ['p50', 'p99']) emitFailure(rowName(kind, size, p), error, 'ms');
        }
      }
    }
  } finally {
    await Promise.all([servers.svc.stop(), servers.before?.stop(), servers.broadcaster.stop()]);
  }
}

main().catch((error) => {
  log(error.stack ?? String(error));
  emitFailure('audience', error);
  process.exitCode = 1;
});
