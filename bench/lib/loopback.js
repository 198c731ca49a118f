'use strict';
// Benchmarks send traffic only to loopback (bench/README.md "The convention for bench files"):
// every URL a helper is given is checked here before a single byte leaves the process.

const net = require('node:net');

function isLoopbackHost(host) {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === 'localhost' || bare === '::1') return true;
  return net.isIPv4(bare) && bare.split('.')[0] === '127';
}

/** Throws unless `url` is http(s) or ws(s) to a loopback address; returns the parsed URL. */
function assertLoopbackUrl(url) {
  const parsed = new URL(url);
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(parsed.protocol)) throw new Error(`refusing non-HTTP URL ${url}`);
  if (!isLoopbackHost(parsed.hostname)) throw new Error(`refusing to send load to ${parsed.hostname}: benchmarks use loopback only`);
  return parsed;
}

module.exports = { isLoopbackHost, assertLoopbackUrl };
