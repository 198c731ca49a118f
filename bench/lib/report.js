'use strict';
// The bench-file convention, in code: diagnostics go to stderr, and stdout carries only one JSON
// line per table row:
//   {"row","unit","svc":{median,min,max},"baseline":{label,median,min,max},"ratio","goal","met"}
// `ratio` is always svc.median / baseline.median; `goal` states which way is good
// (">= 0.75" for throughput, "<= 1.5" for memory growth), or is null for a row shown for
// information. A row that could not be measured, or whose check failed, carries "error".

const path = require('node:path');
const { summarize, round } = require('./stats');

const GOAL = /^(>=|<=|==|>|<)\s*(-?\d+(?:\.\d+)?)$/;
/** A bound on svc's own figure, with its unit: "p99 < 100 ms", "< 150 MiB resident". */
const ABSOLUTE_GOAL = /^(?:[A-Za-z0-9]+\s+)?(<=|<|>=|>)\s*(-?\d+(?:\.\d+)?)\s+[A-Za-z].*$/;

/**
 * Whether svc's figure meets an absolute goal in every run: the worst run (max for "<", min for
 * ">") must be within the bound. null when `goal` is not an absolute goal.
 */
function meetsAbsoluteGoal(svc, goal) {
  const match = ABSOLUTE_GOAL.exec(String(goal).trim());
  if (!match) return null;
  if (!svc || typeof svc.max !== 'number' || typeof svc.min !== 'number') return false;
  const bound = Number(match[2]);
  switch (match[1]) {
    case '<': return svc.max < bound;
    case '<=': return svc.max <= bound;
    case '>': return svc.min > bound;
    default: return svc.min >= bound;
  }
}

/** Whether `ratio` meets `goal` (">= 0.75", "<= 1.5", "== 1"); null when there is no goal. */
function meetsGoal(ratio, goal) {
  if (goal === null || goal === undefined) return null;
  const match = GOAL.exec(String(goal).trim());
  if (!match) throw new Error(`goal must look like ">= 0.75", got ${JSON.stringify(goal)}`);
  if (typeof ratio !== 'number' || !Number.isFinite(ratio)) return false;
  const bound = Number(match[2]);
  switch (match[1]) {
    case '>=': return ratio >= bound;
    case '<=': return ratio <= bound;
    case '>': return ratio > bound;
    case '<': return ratio < bound;
    default: return Math.abs(ratio - bound) < 1e-9;
  }
}

function figure(values) {
  const { median, min, max, n } = summarize(values);
  return { median: round(median), min: round(min), max: round(max), n };
}

/**
 * Builds and prints one row from raw samples.
 * @param {{row: string, unit: string, svc: number[], baseline: {label: string, values: number[]},
 *   goal?: string|null, error?: string, details?: object}} spec
 */
function emitRow(spec) {
  const svc = figure(spec.svc);
  const baseline = { label: spec.baseline.label, ...figure(spec.baseline.values) };
  const ratio = baseline.median === 0 ? null : round(svc.median / baseline.median, 3);
  const goal = spec.goal ?? null;
  // A bound on svc's own figure ("growth <= 128 MiB over idle") or on the ratio (">= 0.75").
  const line = { row: spec.row, unit: spec.unit, svc, baseline, ratio, goal, met: meetsAbsoluteGoal(svc, goal) ?? meetsGoal(ratio, goal) };
  if (spec.error) line.error = spec.error;
  if (spec.details) line.details = spec.details;
  writeLine(line);
  return line;
}

/** A row that could not be measured: the table shows it as failed with `error` as the reason. */
function emitFailure(row, error, unit = '') {
  const message = error instanceof Error ? error.message : String(error);
  writeLine({ row, unit, svc: null, baseline: null, ratio: null, goal: null, met: false, error: message });
}

function writeLine(line) {
  process.stdout.write(JSON.stringify(line) + '\n');
}

/** A diagnostic line on stderr, prefixed with the bench file's name. */
function log(message) {
  const name = path.basename(require.main ? require.main.filename : 'bench', '.bench.js');
  process.stderr.write(`[${name}] ${message}\n`);
}

/** Milliseconds left of the budget run.js gave this file (BENCH_BUDGET_MS), or Infinity. */
function budgetLeftMs() {
  const budget = Number(process.env.BENCH_BUDGET_MS);
  if (!(budget > 0)) return Infinity;
  return budget - process.uptime() * 1000;
}

/** Time kept back for stopping servers and printing rows after the last round. */
const CLEANUP_RESERVE_MS = 10_000;

/**
 * Runs each contender once per round, in alternating order (A B, B A, A B, ...), so that machine
 * drift during the rounds hits svc and its baseline alike. Returns the samples per contender.
 * After `minRounds`, a round that would not fit in what is left of the file's budget is not
 * started (on a busy machine, fewer rounds beat a file killed with no rows at all).
 * @param {number} rounds
 * @param {Record<string, (round: number) => Promise<unknown>>} contenders
 * @param {{minRounds?: number}} [options]
 */
async function alternate(rounds, contenders, { minRounds = 3 } = {}) {
  const names = Object.keys(contenders);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  let longestRoundMs = 0;
  for (let round = 0; round < rounds; round++) {
    if (round >= minRounds && budgetLeftMs() < longestRoundMs * 1.25 + CLEANUP_RESERVE_MS) {
      log(`stopping after ${round} rounds: the next one would not fit in the time budget`);
      break;
    }
    const started = Date.now();
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) samples[name].push(await contenders[name](round));
    longestRoundMs = Math.max(longestRoundMs, Date.now() - started);
  }
  return samples;
}

/** Integer from the environment, for knobs like BENCH_ROUNDS. */
function envInt(name, fallback) {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

module.exports = { emitRow, emitFailure, meetsGoal, meetsAbsoluteGoal, alternate, budgetLeftMs, log, envInt };
