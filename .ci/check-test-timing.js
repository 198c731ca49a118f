#!/usr/bin/env node
'use strict';
// `npm run check:timing` (and .ci/run): the tests wait on signals, never on the clock
// (GUIDE.md "Tests"; docs/architecture.md "Time in tests"). Fails, naming file and line, on
//  1. a fixed wait of 100 ms or more in test/ outside test/helpers/real-time.ts (`waitRealTime`,
//     the one wait that names why a real peer needs real time): an awaited `sleep`/`pause`/`delay`
//     call, a `new Promise((resolve) => setTimeout(resolve, ms))` or `timers/promises`' setTimeout;
//  2. a wall-clock duration compared with a constant under 5,000 ms: a `Date.now()` /
//     `performance.now()` difference (or a name, a `.at` stamp or an array holding one) in an
//     `expect(...).toBeLessThan/GreaterThan...(n)` or in a `<`/`>` comparison. Hang guards of
//     5,000 ms or more pass; timing goals live in bench/ (bench/README.md);
//  3. any `expect(a - b)` (a plain difference, found from its shape, not from names) held by
//     toBeGreaterThan/toBeLessThan(OrEqual) to a bound above 0 and under 5,000: a bound of 0 or
//     less states an order and passes. Its test: test/unit/ci/check-test-timing.test.ts.
// Constants are read from `const NAME = <number>` lines of the same file; a bound that cannot be
// read counts as under 5,000 (write the number, or a named constant).
// The places not converted yet are listed in .ci/test-timing-pending.txt (`path | text on the line |
// why`): they are reported, not failed, and an entry that matches nothing any more fails the check
// (delete it), so the list only shrinks.
// `node .ci/check-test-timing.js --count` prints the counts only and exits 0 (for the report).

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const TEST_DIR = path.join(ROOT, 'test');
const REAL_TIME_HELPER = path.join('test', 'helpers', 'real-time.ts');
const WAIT_LIMIT_MS = 100;
const DURATION_LIMIT_MS = 5000;
const PENDING_FILE = path.join(__dirname, 'test-timing-pending.txt');

/** The entries of .ci/test-timing-pending.txt: { file, text, why }. */
function pendingEntries() {
  if (!fs.existsSync(PENDING_FILE)) return [];
  return fs
    .readFileSync(PENDING_FILE, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const [file, text, why] = line.split(' | ').map((part) => part.trim());
      return { file, text, why, used: false };
    });
}

function filesUnder(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : filesUnder(full);
    return /\.(ts|js|mjs|cjs)$/.test(entry.name) ? [full] : [];
  });
}

/** `const NAME = 1_000 * 2` → NAME: 2000, for the numbers a file names. */
function constantsOf(source) {
  const constants = new Map();
  for (const match of source.matchAll(/\bconst\s+([A-Za-z_$][\w$]*)\s*(?::\s*number\s*)?=\s*([\d_.\s*+\-/()]+?)\s*[;,\n]/g)) {
    const value = evaluate(match[2], constants);
    if (value !== undefined) constants.set(match[1], value);
  }
  return constants;
}

/** A small number expression (`CHANGE_WITHIN_MS + 500`, `8 * 1000`), or undefined when it names anything else. */
function evaluate(expression, constants) {
  const substituted = expression.replace(/(\d)_(?=\d)/g, '$1').replace(/[A-Za-z_$][\w$.]*/g, (name) => (constants.has(name) ? `(${constants.get(name)})` : '#'));
  if (substituted.includes('#') || !/^[\d_.\s*+\-/()]+$/.test(substituted)) return undefined;
  try {
    const value = Function(`"use strict"; return (${substituted.replace(/(\d)_(?=\d)/g, '$1')});`)();
    return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The argument of the call opening at `open` (the index of its "("), to its matching ")". */
function argumentAt(text, open) {
  let depth = 0;
  for (let index = open; index < text.length; index += 1) {
    if (text[index] === '(') depth += 1;
    if (text[index] === ')') {
      depth -= 1;
      if (depth === 0) return text.slice(open + 1, index);
    }
  }
  return text.slice(open + 1);
}

function problemAt(relative, source, index, message) {
  const start = source.lastIndexOf('\n', index) + 1;
  const end = source.indexOf('\n', index);
  return { relative, text: source.slice(start, end < 0 ? undefined : end), message: `${relative}:${lineOf(source, index)}: ${message}` };
}

function lineOf(source, index) {
  return source.slice(0, index).split('\n').length;
}

/** Splits a call's arguments at its top-level commas. */
function splitArguments(text) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if ('([{'.includes(char)) depth += 1;
    if (')]}'.includes(char)) depth -= 1;
    if (char === ',' && depth === 0) {
      parts.push(text.slice(start, index).trim());
      start = index + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts;
}

const NOW_DIFFERENCE = /(?:Date|performance)\.now\(\)\s*-|-\s*(?:Date|performance)\.now\(\)|\bprocess\.hrtime/;
/** A stamp taken from the clock: `x.at`, `sentAt`, `times[i]` of an array of stamps. */
const STAMP_DIFFERENCE = /(?:\.at\b(?:\s*\?\?\s*\w+)?|\b\w+At\b|\bat\b)\s*\)?\s*-\s*\(?[\w.[\]?()]*|\b\w+\s*-\s*\(?[\w.[\]?]*(?:\.at\b|At\b)/;

/** An array of stamps, in one statement that may span lines: `times = frames.map((entry) => entry.at)`. */
const STAMP_MAP = /\.map\(\s*\(?\s*\w+\s*\)?\s*=>\s*\w+\.at\s*\)/;

/** Names that hold a duration read from the clock anywhere in test/ (`const ms = performance.now() - started`, `afterMs: ...`, `lags.push(...)`). */
function durationNames(sources) {
  const names = new Set();
  for (const source of sources) {
    for (const match of source.matchAll(/(?:\b(?:const|let|var)\s+|\b)([A-Za-z_$][\w$]*)\s*(?:=(?!=)|:)\s*([^;\n]*)/g)) {
      const value = match[2].split(/[,}]/)[0];
      if (NOW_DIFFERENCE.test(value) && !/=>/.test(value.split(NOW_DIFFERENCE)[0])) names.add(match[1]);
      // An array of stamps: `const times = frames.map((entry) => entry.at)`.
      if (/\.map\(\(?\w+\)?\s*=>\s*\w+\.at\)/.test(match[2])) names.add(match[1]);
    }
    for (const match of source.matchAll(/\b([A-Za-z_$][\w$]*)\.push\(([^;\n]*)/g)) if (NOW_DIFFERENCE.test(match[2])) names.add(match[1]);
  }
  return names;
}

/**
 * The top-level operands of `expression` when it is a plain difference (`a - b`, `(x ?? 0) - (y ?? 0)`,
 * the last operand of a guard `late && late.at - sent`), or undefined. Found from the shape, not from
 * names: a difference of two values compared with a bound is a duration unless the bound says otherwise.
 */
function differenceOperands(expression) {
  let text = expression.trim().replace(/,$/, '');
  const guarded = splitTopLevel(text, '&&');
  text = guarded[guarded.length - 1];
  while (text.startsWith('(') && closingOf(text, 0) === text.length - 1) text = text.slice(1, -1).trim();
  const operands = [];
  let depth = 0;
  let start = 0;
  let previous = '';
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if ('([{'.includes(char)) depth += 1;
    else if (')]}'.includes(char)) depth -= 1;
    else if (depth === 0 && /[+*/%<>=!|&^~,]/.test(char)) return undefined;
    else if (depth === 0 && char === '?' && text[index + 1] !== '.') return undefined;
    else if (depth === 0 && char === '-' && /[\w$)\]]/.test(previous)) {
      operands.push(text.slice(start, index).trim());
      start = index + 1;
    }
    if (!/\s/.test(char)) previous = char;
  }
  operands.push(text.slice(start).trim());
  if (operands.length < 2 || operands.some((operand) => operand === '' || /^[\d_.]+$/.test(operand))) return undefined;
  return operands;
}

/** Splits at a top-level separator (outside brackets). */
function splitTopLevel(text, separator) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if ('([{'.includes(char)) depth += 1;
    if (')]}'.includes(char)) depth -= 1;
    if (depth === 0 && text.startsWith(separator, index)) {
      parts.push(text.slice(start, index));
      start = index + separator.length;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim());
}

/** The index of the bracket closing the one at `open`. */
function closingOf(text, open) {
  let depth = 0;
  for (let index = open; index < text.length; index += 1) {
    if ('([{'.includes(text[index])) depth += 1;
    if (')]}'.includes(text[index])) {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return -1;
}

/**
 * Names of one file that hold stamps or gaps between them, read from whole statements over line
 * breaks (`const arrivals = fake\n.calls()\n.map((call) => call.at)`, `const gaps =
 * answers.map((answer, i) => answer.at - ...)`). Per file: the same name elsewhere may hold a count,
 * or gaps on a manual clock.
 */
function localDurationNames(source) {
  const names = new Set();
  for (const match of source.matchAll(/\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=;]+)?=(?!=)([^;]*)/g)) {
    if (STAMP_MAP.test(match[2])) names.add(match[1]);
    if (/\.map\(/.test(match[2]) && STAMP_DIFFERENCE.test(match[2].slice(match[2].indexOf('.map(')))) names.add(match[1]);
  }
  return names;
}

function holdsDuration(expression, names) {
  // How many stamps there are is a count, not a duration.
  if (/^\s*[\w$.]+\.length\s*$/.test(expression)) return false;
  if (NOW_DIFFERENCE.test(expression) || STAMP_DIFFERENCE.test(expression)) return true;
  for (const name of names) if (new RegExp(`(?:^|[^\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`).test(expression)) return true;
  return false;
}

/** The problems, long waits and duration comparisons of one file of test/ (`relative` to the repository). */
function check(relative, source, sharedNames) {
  const constants = constantsOf(source);
  const names = new Set([...sharedNames, ...localDurationNames(source)]);
  const problems = [];
  const waits = [];
  if (relative !== REAL_TIME_HELPER) {
    const waitCalls = [
      /\bnew Promise\(\s*\(?\s*(\w+)\s*\)?\s*=>\s*setTimeout\(\s*\1\s*,/g,
      /\bawait\s+(?:sleep|pause|delay|wait|setTimeoutPromise)\s*\(/g,
      /\bawait\s+setTimeout\s*\(/g,
    ];
    for (const pattern of waitCalls) {
      for (const match of source.matchAll(pattern)) {
        const open = match.index + match[0].lastIndexOf('(');
        const args = splitArguments(argumentAt(source, open));
        const delay = pattern === waitCalls[0] ? splitArguments(argumentAt(source, source.indexOf('setTimeout(', match.index) + 10))[1] : args[0];
        if (delay === undefined || delay === '') continue;
        const value = evaluate(delay, constants);
        const computed = /(?:Date|performance)\.now\(\)/.test(delay);
        waits.push({ relative, line: lineOf(source, match.index), delay, value });
        if ((value !== undefined && value >= WAIT_LIMIT_MS) || computed) {
          problems.push(
            problemAt(
              relative,
              source,
              match.index,
              `a fixed wait of ${value ?? delay} ms: wait for a signal (test/helpers/eventually.ts), or name why a real peer needs real time (test/helpers/real-time.ts waitRealTime)`,
            ),
          );
        }
      }
    }
    if (/from\s+'node:timers\/promises'|require\('node:timers\/promises'\)/.test(source) && /\bsetTimeout\b[^\n]*timers\/promises/.test(source)) {
      problems.push({
        relative,
        text: 'node:timers/promises',
        message: `${relative}: imports setTimeout from node:timers/promises: a fixed wait; use test/helpers/real-time.ts or wait for a signal`,
      });
    }
  }
  const assertions = [];
  for (const match of source.matchAll(/\bexpect\(/g)) {
    const open = match.index + match[0].length - 1;
    const subject = argumentAt(source, open);
    const rest = source.slice(open + subject.length + 2, open + subject.length + 200);
    const matcher = /^\s*(?:\.not)?\.(toBeLessThan|toBeLessThanOrEqual|toBeGreaterThan|toBeGreaterThanOrEqual|toBeCloseTo)\(/.exec(rest);
    if (!matcher) continue;
    const fromClock = holdsDuration(subject, names);
    // `expect(b - a).toBeGreaterThan(n)`: a difference with a bound, whatever its operands are named.
    const difference = matcher[1] !== 'toBeCloseTo' && differenceOperands(subject) !== undefined;
    if (!fromClock && !difference) continue;
    const bound = argumentAt(rest, matcher[0].length - 1);
    const value = evaluate(splitArguments(bound)[0], constants);
    if (value !== undefined && value >= DURATION_LIMIT_MS) continue;
    // A difference held to 0 or less states an order (`later - earlier > 0`), not a duration.
    if (difference && value !== undefined && value <= 0) continue;
    assertions.push({ relative, line: lineOf(source, match.index) });
    problems.push(
      problemAt(
        relative,
        source,
        match.index,
        `expect(${subject.trim()}).${matcher[1]}(${bound.trim()}): a wall-clock duration under ${DURATION_LIMIT_MS} ms; assert the outcome and move the goal to bench/`,
      ),
    );
  }
  for (const match of source.matchAll(/((?:Date|performance)\.now\(\)\s*-\s*[\w.]+)\s*(<=?|>=?)\s*([\w.+*\s]+?)(?=[)&|;?\n])/g)) {
    const value = evaluate(match[3], constants);
    // A fake's own rate window (`Date.now() - windowStart < windowMs`) names its bound: not a test's assertion.
    if (value === undefined || value >= DURATION_LIMIT_MS) continue;
    assertions.push({ relative, line: lineOf(source, match.index) });
    problems.push(
      problemAt(
        relative,
        source,
        match.index,
        `${match[0].trim()}: a wall-clock duration compared with ${value ?? match[3].trim()} ms; wait for a signal with a hang guard of ${DURATION_LIMIT_MS} ms or more`,
      ),
    );
  }
  return { problems, waits, assertions };
}

function main() {
  const files = filesUnder(TEST_DIR).sort();
  const sources = files.map((file) => fs.readFileSync(file, 'utf8'));
  const names = durationNames(sources);
  const results = files.map((file, index) => check(path.relative(ROOT, file), sources[index], names));
  const problems = results.flatMap((result) => result.problems);
  const longWaits = results.flatMap((result) => result.waits).filter((wait) => wait.value === undefined || wait.value >= WAIT_LIMIT_MS);
  const assertions = results.flatMap((result) => result.assertions);
  const assertionFiles = new Set(assertions.map((assertion) => assertion.relative));
  const summary = `check-test-timing: ${longWaits.length} waits of ${WAIT_LIMIT_MS} ms or more (or computed) outside ${REAL_TIME_HELPER}; ${assertions.length} duration comparisons under ${DURATION_LIMIT_MS} ms in ${assertionFiles.size} files`;
  if (process.argv.includes('--count')) {
    for (const wait of longWaits) process.stdout.write(`wait ${wait.relative}:${wait.line} ${wait.value ?? wait.delay}\n`);
    for (const assertion of assertions) process.stdout.write(`duration ${assertion.relative}:${assertion.line}\n`);
    process.stdout.write(`${summary}\n`);
    return;
  }
  const pending = pendingEntries();
  const failing = problems.filter((problem) => {
    const fits = (each) => each.file === problem.relative && problem.text.includes(each.text);
    const entry = pending.find((each) => !each.used && fits(each)) ?? pending.find(fits);
    if (entry) entry.used = true;
    return !entry;
  });
  const stale = pending.filter((entry) => !entry.used);
  const allowed = problems.length - failing.length;
  if (allowed > 0) process.stdout.write(`check-test-timing: ${allowed} places still listed in .ci/test-timing-pending.txt\n`);
  for (const problem of failing) process.stderr.write(`${problem.message}\n`);
  for (const entry of stale) process.stderr.write(`.ci/test-timing-pending.txt: "${entry.file} | ${entry.text}" matches nothing any more: delete the entry\n`);
  if (failing.length > 0 || stale.length > 0) {
    process.stderr.write(`\n${summary}\n`);
    process.exitCode = 1;
    return;
  }
  if (allowed > 0) return;
  process.stdout.write(`check-test-timing: no fixed wait of ${WAIT_LIMIT_MS} ms or more, no duration under ${DURATION_LIMIT_MS} ms asserted in test/\n`);
}

if (require.main === module) main();

// For the check's own tests (test/unit/ci/check-test-timing.test.ts).
module.exports = { check, durationNames, differenceOperands };
