'use strict';
// Load generator process: reads autocannon options (JSON) from stdin, checks the target is
// loopback, runs autocannon's library API once and prints one JSON result line on stdout.
// Runs apart from the bench file and the server so that neither shares its event loop.

const autocannon = require('autocannon');
const { assertLoopbackUrl } = require('./loopback');

/**
 * `uniqueMarker: "[<seq>]"` replaces that marker in the body with an id unique to each request
 * (run tag + sequence number), so every stored submission can be told apart. autocannon's own
 * `idReplacement` is not used: it declares a Content-Length for a fixed id length while the ids
 * it inserts vary in length, and the server then waits for bytes that never come.
 */
function withUniqueBodies(options) {
  const { uniqueMarker, channelMarker, channels = 1, ...rest } = options;
  if (!uniqueMarker) return rest;
  if (typeof rest.body !== 'string' || !rest.body.includes(uniqueMarker)) throw new Error(`uniqueMarker ${uniqueMarker} is not in the body`);
  const template = rest.body;
  const runTag = require('node:crypto').randomBytes(4).toString('hex');
  let sequence = 0;
  return {
    ...rest,
    requests: [{
      setupRequest(request) {
        sequence += 1;
        const body = template.split(uniqueMarker).join(`${runTag}-${sequence}`);
        // `channelMarker`: the requests go round `channels` channels, ch-0, ch-1, ... (bench/channels.bench.js).
        return { ...request, body: channelMarker ? body.split(channelMarker).join(`ch-${sequence % channels}`) : body };
      },
    }],
  };
}

/** Every response time of a run, for exact percentiles. */
class LatencyRecorder {
  constructor() {
    this.values = new Float64Array(1 << 16);
    this.count = 0;
  }

  add(ms) {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = ms;
  }

  summary() {
    const sorted = this.values.subarray(0, this.count).sort();
    const at = (q) => (this.count === 0 ? 0 : round(sorted[Math.min(this.count - 1, Math.ceil(q * this.count) - 1)]));
    let sum = 0;
    for (const value of sorted) sum += value;
    return { average: round(this.count ? sum / this.count : 0), p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1), count: this.count };
  }
}

function round(ms) {
  return Math.round(ms * 1000) / 1000;
}

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const options = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  assertLoopbackUrl(options.url);
  if (options.amount === undefined && !(options.duration > 0)) throw new Error('a load run needs a duration or an amount');

  const runOptions = withUniqueBodies(options);
  const latencies = new LatencyRecorder();
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  let lastResponseAt = started;
  const result = await new Promise((resolve, reject) => {
    const instance = autocannon({ ...runOptions, renderProgressBar: false, renderResultsTable: false, renderLatencyTable: false }, (error, res) => (error ? reject(error) : resolve(res)));
    // autocannon's own histogram keeps whole milliseconds; a fast server answers in a fraction
    // of one, so percentiles are computed here from each response's hrtime duration.
    instance.on('response', (_client, _status, _bytes, responseTimeMs) => {
      latencies.add(responseTimeMs);
      lastResponseAt = process.hrtime.bigint();
    });
  });
  const elapsedSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  // autocannon notices the end of a run only on its next 1-second tick, and its `duration`
  // includes that idle tail: an `amount` run of 3.1 s reports 4 s. Throughput is counted over
  // the time responses were actually arriving.
  const activeSeconds = Number(lastResponseAt - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);

  const completed = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
  process.stdout.write(JSON.stringify({
    url: result.url,
    connections: result.connections,
    // Completed responses per second while responses were arriving, measured the same way for
    // every run (autocannon's `requests.average` averages 1-second buckets and skews short runs).
    requestsPerSecond: activeSeconds > 0 ? completed / activeSeconds : 0,
    activeSeconds,
    elapsedSeconds,
    duration: result.duration,
    completed,
    sent: result.requests.sent,
    '2xx': result['2xx'],
    non2xx: result.non2xx,
    statusCodeStats: result.statusCodeStats,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    // Milliseconds, from every response of the run.
    latency: latencies.summary(),
    // Share of one core the load generator used: near 1.0 means the load generator, not the
    // server, may be what limits the run.
    loadGeneratorCpu: (cpu.user + cpu.system) / 1e6 / activeSeconds,
    autocannonAverageRps: result.requests.average,
  }) + '\n');
}

main().catch((error) => {
  process.stderr.write(`load-worker: ${error && error.stack ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
