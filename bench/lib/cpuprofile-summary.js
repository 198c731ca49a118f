'use strict';
// Summarizes a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time,
// and the self time grouped by package / area, so a profile can be quoted in a report.
// Percentages are of busy time: the samples where the event loop was idle are left out.
// Usage: node bench/lib/cpuprofile-summary.js FILE.cpuprofile [top=25]

const fs = require('node:fs');
const path = require('node:path');

function summarize(profile, top = 25) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  // timeDeltas[i] is the time before sample i; attribute it to that sample's node.
  const selfMicros = new Map();
  profile.samples.forEach((id, index) => {
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  let idle = 0;
  for (const [id, micros] of selfMicros) {
    if (byId.get(id).callFrame.functionName === '(idle)') {
      idle += micros;
      selfMicros.delete(id);
    }
  }
  const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);

  const functions = new Map();
  const areas = new Map();
  for (const [id, micros] of selfMicros) {
    const { callFrame } = byId.get(id);
    const name = callFrame.functionName || '(anonymous)';
    const where = callFrame.url ? `${shortUrl(callFrame.url)}:${callFrame.lineNumber + 1}` : '';
    const key = `${name} ${where}`.trim();
    functions.set(key, (functions.get(key) ?? 0) + micros);
    const area = areaOf(callFrame);
    areas.set(area, (areas.get(area) ?? 0) + micros);
  }
  const rank = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([key, micros]) => ({ key, ms: Math.round(micros / 1000), percent: Math.round((micros / total) * 1000) / 10 }));
  return { busyMs: Math.round(total / 1000), idleMs: Math.round(idle / 1000), functions: rank(functions, top), areas: rank(areas, 20) };
}

function shortUrl(url) {
  const clean = url.replace(/^file:\/\//, '');
  const nm = clean.lastIndexOf('node_modules/');
  if (nm >= 0) return clean.slice(nm + 'node_modules/'.length);
  const dist = clean.indexOf('/dist/');
  if (dist >= 0) return clean.slice(dist + 1);
  return clean.startsWith('node:') ? clean : path.basename(clean);
}

function areaOf(callFrame) {
  const name = callFrame.functionName;
  if (!callFrame.url) return name.startsWith('(') ? name : `native ${name || '(anonymous)'}`;
  const url = callFrame.url.replace(/^file:\/\//, '');
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return `npm:${nm[1]}`;
  const dist = /\/dist\/(.+?)\/[^/]+$/.exec(url);
  if (dist) return `svc:${dist[1]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return 'other';
}

if (require.main === module) {
  process.stdout.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  const [file, topArg] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node bench/lib/cpuprofile-summary.js FILE.cpuprofile [top]\n');
    process.exit(2);
  }
  const result = summarize(JSON.parse(fs.readFileSync(file, 'utf8')), Number(topArg) || 25);
  const print = (title, list) => {
    process.stdout.write(`${title}\n`);
    for (const { key, ms, percent } of list) process.stdout.write(`${String(percent).padStart(6)}%  ${String(ms).padStart(7)} ms  ${key}\n`);
  };
  process.stdout.write(`busy: ${result.busyMs} ms (idle, left out: ${result.idleMs} ms)\n`);
  print('\nself time by area (% of busy time):', result.areas);
  print('\ntop functions by self time:', result.functions);
}

module.exports = { summarize };
