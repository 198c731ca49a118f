'use strict';
// `npm run bench`: runs every bench/*.bench.js in turn, each in its own process (a clean heap,
// nothing shared), within a time budget, collects the JSON rows each prints on stdout, and
// prints one table. A missing, failing or overrunning bench file becomes a failed row; the
// table is printed whatever happens. Results are also saved to bench/results/ (not committed).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { meetsAbsoluteGoal, meetsGoal } = require('./lib/report');
const { clockTicks } = require('./lib/cpu');

const BENCH_DIR = __dirname;
const ROOT = path.resolve(BENCH_DIR, '..');

/** The bench files in the order of bench/README.md "What each row measures", with each file's time budget in seconds. */
const EXPECTED = [
  { file: 'http-last.bench.js', budget: 85, what: 'row 1: GET /v1/last against bare node:http' },
  { file: 'http-submit.bench.js', budget: 85, what: 'row 2: POST /v1/remoteinput, stored' },
  { file: 'ws-fanout.bench.js', budget: 130, what: 'row 3: /v1/images/ws fan-out and memory' },
  { file: 'cli-startup.bench.js', budget: 70, what: 'row 4: CLI start-up (svc last --json)' },
  { file: 'enrich-cached.bench.js', budget: 70, what: 'row 5: cached enrichment against none' },
  { file: 'memory.bench.js', budget: 60, what: 'row 6: resident memory' },
  { file: 'postgres.bench.js', budget: 150, what: 'several instances on PostgreSQL: submissions against SQLite, fan-out over 3 instances, nginx' },
  { file: 'postgres-writes.bench.js', budget: 240, what: 'PostgreSQL writes/s: this build against the previous release; 3 instances against 1' },
  { file: 'history.bench.js', budget: 60, what: 'history: GET /v1/history against /v1/last; the page query at 100k vs 1k records' },
  { file: 'images-ws-paused.bench.js', budget: 60, what: "What's Now Playing image clients: RSS with 40 paused /v1/images/ws image readers" },
  { file: 'attack-memory.bench.js', budget: 90, what: 'hostile clients: RSS under resource attacks' },
  { file: 'http-text.bench.js', budget: 60, what: 'plain text: GET /v1/last.txt against /v1/last' },
  { file: 'channels.bench.js', budget: 90, what: 'channels: submissions on 10 channels at once against one channel' },
  { file: 'sse-fanout.bench.js', budget: 90, what: 'Server-Sent Events: /v1/events fan-out to 1,000 readers and RSS' },
  { file: 'outputs.bench.js', budget: 90, what: 'outputs: webhook receipts with one black-holed target; submission latency with vs without outputs' },
  { file: 'outputs-mixed.bench.js', budget: 120, what: 'outputs of mixed types: receipts at webhook, url, rds, dls and obs targets; submission latency with 10 mixed outputs vs none' },
  { file: 'delivery.bench.js', budget: 240, what: 'delivery promises: submission latency with the outbox write vs the build before; 500 changes through 3 instances with kills, in order' },
  { file: 'title-first.bench.js', budget: 90, what: 'title first: POST to the first and to the enriched frame on 100 /v1/images/ws clients' },
  { file: 'complete-frames.bench.js', budget: 60, what: 'complete frames: POST to the first /wsstream frame carrying an already-stored cover' },
  { file: 'attack-fairness.bench.js', budget: 120, what: 'fair under load: /v1/last p99 in a history flood, fat-record RSS, /v1/status under slow headers' },
  { file: 'proxies.bench.js', budget: 150, what: 'behind a proxy and a pooler: cross-instance push to 1,000 SSE readers through nginx vs direct; PostgreSQL connections of 10 instances through PgBouncer' },
  { file: 'idempotency.bench.js', budget: 60, what: "idempotency keys at their bounds: a keyed submission's key work with 10,000 keys kept vs 100" },
  { file: 'playlog.bench.js', budget: 180, what: "play log: listener counts for a month (every play) against one hand-written SQL query; a play's end at 100,000 open sessions vs 1,000; POST latency with session tracking on vs off" },
  { file: 'recognition.bench.js', budget: 300, what: 'recognition: share titled, delay and wrong-title seconds of a hyperrogue-music DJ set at 0, +-2 and +-8 % pitch, with and without the vinyl search, and MP3 64 kbit/s with noise; CPU per stream and per vinyl stream; index memory and match time at 1,000 and 10,000 tracks' },
  { file: 'reports.bench.js', budget: 90, what: 'reports: the SoundExchange census file of a busy month against one SQL query; peak RSS against idle' },
  { file: 'audience.bench.js', budget: 900, what: 'push at audience scale: request sent -> last client at 1,000, 5,000 and 10,000 /v1/images/ws and /v1/events clients vs a bare broadcaster; POST latency with 3,000 sockets; RSS per 1,000 idle clients' },
  { file: 'shutdown.bench.js', budget: 90, what: 'shutdown: SIGTERM to exit with a hanging delivery and 20 held upgrade sockets vs idle' },
  { file: 'instances.bench.js', budget: 180, what: 'several instances, round two: cover burst cache on/off (warm and new connections), POST latency with 3,000 sockets, connections per instance' },
];
const DEFAULT_BUDGET = 60;
/** Every file's budget fits: by default the whole run may take the sum of EXPECTED's budgets. */
const TOTAL_BUDGET = Number(process.env.BENCH_TOTAL_BUDGET_S) || EXPECTED.reduce((sum, entry) => sum + entry.budget, 10);
const MIN_USEFUL_BUDGET = 15;
const KILL_GRACE_MS = 5000;
/** Caps every file's budget, for a quick check of the runner itself. */
const FILE_BUDGET_CAP = Number(process.env.BENCH_FILE_BUDGET_S) || Infinity;

/** The bench file running now: Ctrl-C must reach its process group too. */
let currentChild = null;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (currentChild) {
      signalGroup(currentChild.pid, 'SIGTERM');
      setTimeout(() => signalGroup(currentChild.pid, 'SIGKILL'), 2000).unref();
    }
    process.stderr.write(`\nbench/run.js: ${signal}, stopping\n`);
    process.exitCode = 130;
    setTimeout(() => process.exit(130), 2500).unref();
  });
}

async function main() {
  const started = Date.now();
  const only = process.argv.slice(2);
  const plan = planFiles(only);
  const meta = {
    startedAt: new Date(started).toISOString(),
    node: process.version,
    cpus: os.availableParallelism(),
    loadAverageBefore: os.loadavg()[0],
  };
  const sections = [];
  for (const entry of plan) {
    const remaining = TOTAL_BUDGET - (Date.now() - started) / 1000;
    if (!entry.exists) {
      sections.push({ entry, rows: [failedRow(entry, 'bench file missing')] });
      continue;
    }
    if (remaining < MIN_USEFUL_BUDGET) {
      sections.push({ entry, rows: [failedRow(entry, `skipped: the total budget of ${TOTAL_BUDGET} s was spent`)] });
      continue;
    }
    const budget = Math.min(entry.budget, FILE_BUDGET_CAP, Math.floor(remaining));
    process.stderr.write(`\n== ${entry.file} (${entry.what}; budget ${budget} s)\n`);
    const before = cpuSnapshot();
    const outcome = await runBenchFile(entry, budget);
    const otherCores = otherProcessesCores(before, cpuSnapshot());
    if (otherCores !== null) process.stderr.write(`== other processes used ${otherCores.toFixed(2)} cores on average meanwhile\n`);
    sections.push({ entry, ...outcome, otherCores });
  }
  meta.loadAverageAfter = os.loadavg()[0];
  meta.seconds = Math.round((Date.now() - started) / 1000);
  const measured = sections.filter((section) => typeof section.otherCores === 'number');
  meta.otherProcessesCores = measured.length ? Math.max(...measured.map((section) => section.otherCores)) : null;

  const rows = sections.flatMap((section) => section.rows);
  process.stdout.write(renderTable(rows, meta));
  saveResults(rows, meta, sections);
  return rows.some((row) => row.error) ? 1 : 0;
}

function planFiles(only) {
  const present = new Set(fs.readdirSync(BENCH_DIR).filter((name) => name.endsWith('.bench.js')));
  const expectedNames = new Set(EXPECTED.map((e) => e.file));
  const extras = [...present]
    .filter((name) => !expectedNames.has(name))
    .sort()
    .map((file) => ({ file, budget: DEFAULT_BUDGET, what: file }));
  const all = [...EXPECTED, ...extras].map((entry) => ({ ...entry, exists: present.has(entry.file) }));
  if (only.length === 0) return all;
  // `node bench/run.js http-last memory` runs a subset (no missing-file rows for the rest).
  return all.filter((entry) => only.some((name) => entry.file === name || entry.file === `${name}.bench.js`));
}

/** Runs one bench file in its own process group; resolves with its rows, never rejects. */
function runBenchFile(entry, budgetSeconds) {
  return new Promise((resolve) => {
    const rows = [];
    const stderrTail = [];
    let stdoutBuffer = '';
    let timedOut = false;
    const startedAt = Date.now();
    const child = spawn(process.execPath, [path.join(BENCH_DIR, entry.file)], {
      cwd: ROOT,
      env: { ...process.env, BENCH_BUDGET_MS: String(budgetSeconds * 1000) },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so a timeout also stops the servers and load workers it started.
      detached: true,
    });
    currentChild = child;

    const takeLine = (line) => {
      if (line.trim() === '') return;
      let parsed;
      try {
        parsed = JSON.parse(line);
      } catch {
        stderrTail.push(`(stdout, not JSON) ${line}`);
        return;
      }
      rows.push(normalizeRow(parsed, entry));
    };
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      stdoutBuffer += chunk;
      const lines = stdoutBuffer.split('\n');
      stdoutBuffer = lines.pop();
      lines.forEach(takeLine);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      process.stderr.write(chunk);
      stderrTail.push(...chunk.split('\n').filter((l) => l.trim() !== ''));
      stderrTail.splice(0, Math.max(0, stderrTail.length - 20));
    });

    let killTimer;
    const budgetTimer = setTimeout(() => {
      timedOut = true;
      signalGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => signalGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS);
    }, budgetSeconds * 1000);

    child.on('error', (error) => stderrTail.push(`cannot start: ${error.message}`));
    child.on('close', (code, signal) => {
      clearTimeout(budgetTimer);
      clearTimeout(killTimer);
      currentChild = null;
      // Whatever the file left behind (a server it forgot to stop) goes with it.
      signalGroup(child.pid, 'SIGKILL');
      if (stdoutBuffer) takeLine(stdoutBuffer);
      const seconds = Math.round((Date.now() - startedAt) / 1000);
      const lastWords = stderrTail.slice(-1)[0] ?? '';
      if (timedOut) {
        rows.push(failedRow(entry, `timed out: stopped after its budget of ${budgetSeconds} s${rows.length ? ' (rows above were complete)' : ''}`));
      } else if (code !== 0 && !rows.some((row) => row.error)) {
        rows.push(failedRow(entry, `exited with ${signal ?? `code ${code}`}${lastWords ? `: ${lastWords}` : ''}`));
      } else if (rows.length === 0) {
        rows.push(failedRow(entry, 'printed no rows on stdout'));
      }
      process.stderr.write(`== ${entry.file}: ${rows.length} row(s) in ${seconds} s\n`);
      resolve({ rows, seconds, exitCode: code, signal, timedOut });
    });
  });
}

// ---- how busy the machine was with work that is not ours --------------------------------------

/** CPU seconds used by the whole machine (/proc/stat) and by this runner with its reaped children. */
function cpuSnapshot() {
  try {
    const ticks = clockTicks();
    const cpuLine = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal. irq and softirq are left out: loopback
    // traffic of the bench itself is processed there (about 0.25 cores under load, measured),
    // not in any process's own time. steal counts: the hypervisor gave the time to someone else.
    const [user, nice, system, , , , , steal = 0] = cpuLine;
    const machine = (user + nice + system + steal) / ticks;
    const self = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = self
      .slice(self.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    // utime stime cutime cstime: fields 14-17 of the line, 11-14 after the command name.
    const own = (fields[11] + fields[12] + fields[13] + fields[14]) / ticks;
    return { machine, own, at: Date.now() };
  } catch {
    return null;
  }
}

/**
 * Cores' worth of CPU that other processes (other developers' tests, builds) used between two
 * snapshots: the noise under the figures. A bench file's children count as ours once reaped.
 */
function otherProcessesCores(before, after) {
  if (!before || !after || after.at <= before.at) return null;
  const seconds = (after.at - before.at) / 1000;
  return Math.max(0, (after.machine - before.machine - (after.own - before.own)) / seconds);
}

function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}

/** Checks a row against the convention; `met` is recomputed from ratio and goal when it can be. */
function normalizeRow(raw, entry) {
  if (typeof raw !== 'object' || raw === null || typeof raw.row !== 'string') {
    return failedRow(entry, `malformed row: ${JSON.stringify(raw).slice(0, 120)}`);
  }
  const row = { ...raw, file: entry.file };
  const isFigure = (f) => typeof f === 'object' && f !== null && ['median', 'min', 'max'].every((k) => typeof f[k] === 'number');
  // A row may have no baseline in a run (baseline null: e.g. title-first without BENCH_BEFORE_ROOT);
  // its goal, if any, is then a bound on svc's own figure.
  if (!row.error && (!isFigure(row.svc) || (row.baseline !== null && !isFigure(row.baseline)))) {
    row.error = 'malformed row: svc needs {median, min, max}, and so does baseline unless it is null';
  }
  if (typeof row.ratio !== 'number' && isFigure(row.svc) && isFigure(row.baseline) && row.baseline.median !== 0) {
    row.ratio = row.svc.median / row.baseline.median;
  }
  if (row.goal !== undefined && row.goal !== null) {
    const absolute = meetsAbsoluteGoal(row.svc, row.goal);
    try {
      row.met = absolute ?? meetsGoal(row.ratio, row.goal);
    } catch (error) {
      row.error ??= error.message;
    }
  } else {
    row.goal = null;
    row.met = null;
  }
  return row;
}

function failedRow(entry, reason) {
  return {
    row: entry.what.replace(/^row \d+: /, ''),
    unit: '',
    svc: null,
    baseline: null,
    ratio: null,
    goal: null,
    met: false,
    error: reason,
    file: entry.file,
  };
}

// ---- rendering -------------------------------------------------------------------------------

function renderTable(rows, meta) {
  const header = ['#', 'row', 'svc median [min..max]', 'baseline median [min..max]', 'ratio', 'goal', 'met'];
  const body = rows.map((row, index) => [
    String(index + 1),
    row.unit ? `${row.row} (${row.unit})` : row.row,
    formatFigure(row.svc),
    formatFigure(row.baseline),
    typeof row.ratio === 'number' ? formatNumber(row.ratio, 3) : '-',
    row.goal ?? '-',
    row.error ? 'FAILED' : row.met === null ? '-' : row.met ? 'yes' : 'NO',
  ]);
  const widths = header.map((title, col) => Math.max(title.length, ...body.map((cells) => cells[col].length)));
  const line = (cells) => `| ${cells.map((cell, col) => (col >= 4 || col === 0 ? cell.padStart(widths[col]) : cell.padEnd(widths[col]))).join(' | ')} |`;
  const rule = `|${widths.map((w, col) => (col >= 4 || col === 0 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;

  const out = [];
  out.push('');
  out.push(
    `svc bench, ${meta.startedAt}: node ${meta.node}, ${meta.cpus} CPUs, ${meta.seconds} s, ` +
      `load average ${meta.loadAverageBefore.toFixed(2)} before` +
      (meta.otherProcessesCores === null ? '' : `, other processes used up to ${meta.otherProcessesCores.toFixed(2)} cores during a bench file`),
  );
  out.push('');
  out.push(line(header));
  out.push(rule);
  for (const cells of body) out.push(line(cells));
  out.push('');
  out.push('ratio = svc median / baseline median; figures are medians of alternating runs, [min..max] across runs.');
  out.push('Baselines:');
  rows.forEach((row, index) => {
    if (row.baseline && row.baseline.label) out.push(`  ${index + 1}. ${row.baseline.label}`);
  });
  const failures = rows.map((row, index) => ({ row, index })).filter(({ row }) => row.error);
  if (failures.length > 0) {
    out.push('Failed:');
    for (const { row, index } of failures) out.push(`  ${index + 1}. ${row.file}: ${row.error}`);
  }
  if (meta.otherProcessesCores !== null && meta.otherProcessesCores > 0.25) {
    out.push(
      `Note: other processes used up to ${meta.otherProcessesCores.toFixed(2)} of ${meta.cpus} cores while a bench file ran; ` +
        'figures are noisier than usual (the CPU-per-request row is the least affected).',
    );
  }
  out.push('');
  return out.join('\n');
}

function formatFigure(figure) {
  if (!figure) return '-';
  return `${formatNumber(figure.median)} [${formatNumber(figure.min)}..${formatNumber(figure.max)}]`;
}

/** 1,234 for big numbers, three significant digits for small ones. */
function formatNumber(value, digits = 3) {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  if (value === 0) return '0';
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(value))));
  return String(Number(value.toFixed(decimals)));
}

function saveResults(rows, meta, sections) {
  try {
    const dir = path.join(BENCH_DIR, 'results');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${meta.startedAt.replace(/[:.]/g, '-')}.json`);
    const files = sections.map(({ entry, seconds, exitCode, timedOut, otherCores }) => ({
      file: entry.file,
      exists: entry.exists,
      seconds,
      exitCode,
      timedOut,
      otherCores,
    }));
    fs.writeFileSync(file, JSON.stringify({ meta, files, rows }, null, 2) + '\n');
    process.stderr.write(`results saved to ${path.relative(ROOT, file)}\n`);
  } catch (error) {
    process.stderr.write(`could not save results: ${error.message}\n`);
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`bench/run.js: ${error.stack ?? error}\n`);
    process.exitCode = 2;
  },
);
