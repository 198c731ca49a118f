'use strict';
// The play log (docs/play-log.md):
//   a) listener counts for a month of a busy station: 30 days, 400 plays a day, 200,000 listener
//      sessions, computed for every play the way svc does when a play ends (the store's count,
//      one aggregate query per play, dist/store/sqlite/listener-sessions), against one hand-written
//      SQL query that makes the same overlap count (atp: distinct listeners, and listener seconds) for all plays at
//      once on the same database (goal <= 1.5: time, lower is better). Both use the same
//      range bound on connected_at (the longest session), as anyone writing that query by hand
//      for a large table would; without it both are a scan per play. The atp of every play must
//      agree between the two, or the row fails.
//   b) POST /v1/remoteinput p50 with session tracking on (an Icecast server configured, 200
//      listeners coming and going through URL authentication meanwhile, every ended play
//      counted) against an svc without it, alternating, paced like track changes (goal <= 1.1).
//   c) a play's end at the open-session cap: the store's count of one 3-minute play with 100,000
//      sessions open across it (50,000 listeners, some with two players) and 400 coming and going
//      inside it, against the same count with 1,000 open, same run, same store (goal <= 2: the
//      count reads the open totals of SQLite migration 18, not the open sessions). Both are
//      checked against countListeners (dist/domain/play).
// The databases are filled through svc's own store. Every request stays on loopback.

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { startSvc, ROOT } = require('./lib/svc-process');
const { CPU, pinSelf } = require('./lib/processes');
const { emitRow, emitFailure, alternate, log, envInt } = require('./lib/report');
const { median } = require('./lib/stats');

const ROUNDS = envInt('BENCH_ROUNDS', 3);
const DAYS = 30;
const PLAYS_PER_DAY = 400;
const SESSIONS = 200_000;
const SUBMISSIONS = envInt('BENCH_PLAYLOG_SUBMISSIONS', 60);
const QUIET_MS = 20;
const LISTENERS = 200;
const ROW_COUNTS = 'listener counts, 30 d x 400 plays, 200k sessions, every play';
const ROW_SUBMIT = 'POST /v1/remoteinput p50, session tracking on vs off, paced';
const ROW_OPEN = "a play's end (its listener count), 100,000 open sessions vs 1,000";
const OPEN_MANY = 100_000;
const OPEN_FEW = 1_000;
const COUNT_CALLS = envInt('BENCH_PLAYLOG_COUNTS', 30);

const dist = (file) => require(path.join(ROOT, 'dist', file));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A deterministic pseudo-random sequence: the same month in every run. */
function seeded(seed) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** Fills `file` with a month of plays and sessions through svc's store; answers the end of the month. */
async function fillMonth(file) {
  const { openDatabase } = dist('store/sqlite/database');
  const { createPlayLogStore } = dist('store/sqlite/plays');
  const { createTrackStore } = dist('store/sqlite/tracks');
  const db = openDatabase(file);
  const plays = createPlayLogStore(db);
  const tracks = createTrackStore(db, plays);
  const random = seeded(7);
  const start = Date.UTC(2026, 9, 1);
  const monthMs = DAYS * 86_400_000;
  const playMs = 86_400_000 / PLAYS_PER_DAY;
  const iso = (ms) => new Date(ms).toISOString();
  // The store's calls are synchronous under their promises: one transaction holds them all.
  db.transaction(() => {
    for (let i = 0; i < DAYS * PLAYS_PER_DAY; i++) {
      const at = iso(start + i * playMs);
      void tracks.insert({ receivedSeq: i + 1, receivedAt: at, metadata: { artist: `Artist ${i % 701}`, title: `Title ${i}` } });
    }
    void plays.end('main', iso(start + monthMs), 'explicit');
    for (let i = 0; i < SESSIONS; i++) {
      const connected = start + random() * monthMs;
      // Mostly short listens, some of hours; a few still connected at the end.
      const length = random() < 0.9 ? random() * 45 * 60_000 : random() * 6 * 3_600_000;
      const key = { server: 'http://icecast.bench:8000', mount: '/live.mp3', clientId: String(i) };
      void plays.openSession({ ...key, channel: 'main', source: 'auth', address: `h${i % 50_000}`, userAgent: 'bench', connectedAt: iso(connected) }, SESSIONS);
      const ended = connected + length;
      if (ended < start + monthMs) void plays.closeSession(key, iso(ended));
    }
  })();
  db.close();
}

/** svc's way: the ended plays, each counted from its overlapping sessions. */
async function countWithStore(file) {
  const { openDatabase } = dist('store/sqlite/database');
  const { createPlayLogStore } = dist('store/sqlite/plays');
  const db = openDatabase(file);
  try {
    const plays = createPlayLogStore(db);
    const counts = new Map();
    const started = performance.now();
    for await (const page of plays.playPages({ from: '2000-01-01T00:00:00.000Z', to: '2999-01-01T00:00:00.000Z', channel: 'main' })) {
      for (const row of page) {
        const { startedAt, endedAt } = row.play;
        counts.set(row.dbid, await plays.countListeners('main', startedAt, endedAt, { minSessionSeconds: 0, now: new Date().toISOString() }));
      }
    }
    return { seconds: (performance.now() - started) / 1000, counts };
  } finally {
    db.close();
  }
}

/** The hand-written query: one statement, every play's atp and listener seconds. */
const HAND_SQL = `
  WITH bound AS (SELECT longest_ms / 1000.0 AS seconds FROM listener_session_bounds WHERE channel = 'main'),
  plays AS (SELECT dbid, channel, started_at, ended_at FROM tracks WHERE channel = 'main' AND ended_at IS NOT NULL),
  overlaps AS (
    SELECT p.dbid, p.started_at, p.ended_at, s.connected_at, s.disconnected_at, s.address, s.user_agent
      FROM plays p, bound
      JOIN listener_sessions s
        ON s.channel = p.channel
       AND s.connected_at >= strftime('%Y-%m-%dT%H:%M:%fZ', p.started_at, '-' || bound.seconds || ' seconds')
       AND s.connected_at < p.ended_at
       AND s.disconnected_at > p.started_at
    UNION ALL
    SELECT p.dbid, p.started_at, p.ended_at, s.connected_at, s.disconnected_at, s.address, s.user_agent
      FROM plays p
      JOIN listener_sessions s ON s.channel = p.channel AND s.disconnected_at IS NULL AND s.connected_at < p.ended_at
  )
  SELECT dbid,
         count(DISTINCT address || char(10) || user_agent) AS atp,
         sum((julianday(min(coalesce(disconnected_at, ended_at), ended_at)) - julianday(max(connected_at, started_at))) * 86400) AS seconds
    FROM overlaps
   GROUP BY dbid`;

function countWithSql(file) {
  const Database = require('better-sqlite3');
  const db = new Database(file, { readonly: true });
  try {
    const started = performance.now();
    const rows = db.prepare(HAND_SQL).all();
    return { seconds: (performance.now() - started) / 1000, counts: new Map(rows.map((row) => [row.dbid, row])) };
  } finally {
    db.close();
  }
}

async function listenerCounts(dir) {
  const file = path.join(dir, 'month.db');
  const filled = Date.now();
  await fillMonth(file);
  log(`filled ${DAYS * PLAYS_PER_DAY} plays and ${SESSIONS} sessions in ${Date.now() - filled} ms`);
  const samples = await alternate(ROUNDS, {
    store: async () => {
      const result = await countWithStore(file);
      log(`store: ${result.seconds.toFixed(2)} s for ${result.counts.size} plays`);
      return result;
    },
    sql: async () => {
      const result = countWithSql(file);
      log(`hand-written SQL: ${result.seconds.toFixed(2)} s for ${result.counts.size} plays`);
      return result;
    },
  });
  const store = samples.store[0];
  const sql = samples.sql[0];
  const disagree = [...store.counts].filter(([dbid, count]) => (sql.counts.get(dbid)?.atp ?? 0) !== count.atp);
  emitRow({
    row: ROW_COUNTS,
    unit: 's',
    svc: samples.store.map((result) => result.seconds),
    baseline: { label: 'one hand-written SQL overlap query, same database', values: samples.sql.map((result) => result.seconds) },
    goal: '<= 1.5',
    ...(disagree.length > 0 ? { error: `atp differs from the SQL count for ${disagree.length} plays (first dbid ${disagree[0][0]})` } : {}),
    details: { plays: store.counts.size, meanAtp: [...store.counts.values()].reduce((sum, count) => sum + count.atp, 0) / store.counts.size },
  });
}

/** `open` sessions connected in the hour before a play (one listener in two with a second player), 400 more coming and going inside it. */
async function fillOpen(file, open) {
  const { openDatabase } = dist('store/sqlite/database');
  const { createPlayLogStore } = dist('store/sqlite/plays');
  const db = openDatabase(file);
  const plays = createPlayLogStore(db);
  const start = Date.UTC(2026, 9, 1, 12);
  const iso = (ms) => new Date(ms).toISOString();
  const sessions = [];
  const add = (i, connected, ended, address) => {
    const key = { server: 'http://icecast.bench:8000', mount: '/live.mp3', clientId: String(i) };
    void plays.openSession({ ...key, channel: 'main', source: 'auth', address, userAgent: 'bench', connectedAt: iso(connected) }, OPEN_MANY * 2);
    if (ended !== null) void plays.closeSession(key, iso(ended));
    sessions.push({ connectedAt: iso(connected), disconnectedAt: ended === null ? null : iso(ended), listener: `${address}\nbench` });
  };
  db.transaction(() => {
    for (let i = 0; i < open; i++) add(i, start - 3_600_000 + (i * 3_600_000) / open, null, `h${i % (open / 2)}`);
    for (let i = 0; i < 400; i++) add(open + i, start + i * 400, start + i * 400 + 30_000, `p${i}`);
  })();
  db.close();
  return { play: { startedAt: iso(start), endedAt: iso(start + 180_000) }, now: iso(start + 181_000), sessions };
}

/** The median ms of COUNT_CALLS counts of the play; fails when a count differs from countListeners. */
async function timeCount(file, filled) {
  const { openDatabase } = dist('store/sqlite/database');
  const { createPlayLogStore } = dist('store/sqlite/plays');
  const { countListeners } = dist('domain/play');
  const db = openDatabase(file);
  try {
    const plays = createPlayLogStore(db);
    const expected = countListeners(filled.play, filled.sessions, 0, Date.parse(filled.now));
    const times = [];
    for (let i = 0; i < COUNT_CALLS; i++) {
      const started = performance.now();
      const counted = await plays.countListeners('main', filled.play.startedAt, filled.play.endedAt, { minSessionSeconds: 0, now: filled.now });
      times.push(performance.now() - started);
      if (JSON.stringify(counted) !== JSON.stringify(expected)) throw new Error(`count ${JSON.stringify(counted)}, countListeners ${JSON.stringify(expected)}`);
    }
    return median(times);
  } finally {
    db.close();
  }
}

async function openSessionCount(dir) {
  const many = path.join(dir, 'open-many.db');
  const few = path.join(dir, 'open-few.db');
  const filled = { many: await fillOpen(many, OPEN_MANY), few: await fillOpen(few, OPEN_FEW) };
  const samples = await alternate(ROUNDS, { many: () => timeCount(many, filled.many), few: () => timeCount(few, filled.few) });
  emitRow({
    row: ROW_OPEN,
    unit: 'ms',
    svc: samples.many,
    baseline: { label: `the same count with ${OPEN_FEW} sessions open, same store`, values: samples.few },
    goal: '<= 2',
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

function post(url, pathName, body, type) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(
      `${url}${pathName}`,
      { method: 'POST', agent, headers: { 'content-type': type, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`${pathName} answered ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Icecast's URL-authentication calls for LISTENERS listeners who keep coming and going, until stopped. */
function listenerTraffic(url) {
  let running = true;
  let client = 0;
  const form = (action, id) => `action=${action}&server=127.0.0.1&port=8000&client=${id}&mount=%2flive%2emp3&user=&pass=&ip=127.0.0.${id % 250}&agent=bench`;
  const loop = (async () => {
    const open = [];
    while (running) {
      client += 1;
      await post(url, '/v1/icecast/listeners', form('listener_add', client), 'application/x-www-form-urlencoded');
      open.push(client);
      if (open.length > LISTENERS)
        await post(url, '/v1/icecast/listeners', `${form('listener_remove', open.shift())}&duration=60`, 'application/x-www-form-urlencoded');
      await sleep(10);
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

async function submissionLatency(dir) {
  const on = path.join(dir, 'on.json');
  const off = path.join(dir, 'off.json');
  fs.writeFileSync(on, JSON.stringify({ playlog: { icecast: [{ url: 'http://127.0.0.1:8000', mounts: { '/live.mp3': 'main' } }] } }));
  fs.writeFileSync(off, '{}');
  const tracking = await startSvc({ args: ['--config', on] });
  const plain = await startSvc({ args: ['--config', off] });
  const stopTraffic = listenerTraffic(tracking.url);
  let sequence = 0;
  try {
    const latencyOf = (url) => async () => {
      const times = [];
      for (let i = 0; i < SUBMISSIONS; i++) {
        times.push(await post(url, '/v1/remoteinput', JSON.stringify({ artist: 'Bench Artist', title: `play ${sequence++}` }), 'application/json'));
        await sleep(QUIET_MS);
      }
      return median(times);
    };
    const samples = await alternate(ROUNDS, { on: latencyOf(tracking.url), off: latencyOf(plain.url) });
    emitRow({
      row: ROW_SUBMIT,
      unit: 'ms',
      svc: samples.on,
      baseline: { label: 'the same svc build without playlog.icecast (no sessions, no counting)', values: samples.off },
      goal: '<= 1.1',
    });
  } finally {
    await stopTraffic();
    agent.destroy();
    await Promise.all([tracking.stop(), plain.stop()]);
  }
}

async function main() {
  pinSelf(CPU.load);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-playlog-'));
  try {
    try {
      await listenerCounts(dir);
    } catch (error) {
      log(error.stack ?? String(error));
      emitFailure(ROW_COUNTS, error, 's');
      process.exitCode = 1;
    }
    try {
      await openSessionCount(dir);
    } catch (error) {
      log(error.stack ?? String(error));
      emitFailure(ROW_OPEN, error, 'ms');
      process.exitCode = 1;
    }
    try {
      await submissionLatency(dir);
    } catch (error) {
      log(error.stack ?? String(error));
      emitFailure(ROW_SUBMIT, error, 'ms');
      process.exitCode = 1;
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
