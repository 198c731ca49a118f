'use strict';
// The limit for an HTTP service on Node: a bare node:http server that answers every request
// with the same status, headers and body bytes (read from the JSON file named in argv[2]).
// Run as its own process; prints "baseline listening on <url>" like `svc serve` does.

const fs = require('node:fs');
const http = require('node:http');

const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const body = Buffer.from(spec.body, 'utf8');
const headers = { ...spec.headers, 'content-length': String(body.length) };
const status = spec.status ?? 200;

const server = http.createServer((req, res) => {
  // Drain a request body (POST) before answering, as any real server must.
  req.resume();
  req.on('end', () => {
    res.writeHead(status, headers);
    res.end(body);
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`baseline listening on http://127.0.0.1:${server.address().port}\n`);
});

process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
setInterval(() => {}, 1 << 30); // stay alive while idle (close() ends the process)
