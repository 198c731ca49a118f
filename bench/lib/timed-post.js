'use strict';
// A POST timed from the client's side, on one kept-alive connection, and the nearest-rank
// percentile the push benches report (a p99 of 20 values is the largest, not an interpolation).

const http = require('node:http');
const { performance } = require('node:perf_hooks');

const now = () => performance.timeOrigin + performance.now();

/** A poster on its own kept-alive connection: `post(url, body)` -> {sent, at, body} (JSON answer, 200 only). */
function timedPoster() {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return function post(url, body) {
    const sent = now();
    return new Promise((resolve, reject) => {
      const request = http.request(url, { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => {
          if (response.statusCode !== 200) reject(new Error(`${url} answered ${response.statusCode}`));
          else resolve({ sent, at: now(), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        });
      });
      request.on('error', reject);
      request.end(body);
    });
  };
}

/** The nearest-rank percentile `p` (0-100) of a non-empty list. */
function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

module.exports = { timedPoster, percentile, now };
