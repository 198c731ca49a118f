'use strict';
// The audience baseline (bench/audience.bench.js): a bare node:http + `ws` process that
// broadcasts what it is given, nothing else. WebSocket clients connect to /ws, Server-Sent Events
// readers GET /events. POST /broadcast/ws sends the request body as one text frame to every
// WebSocket client; POST /broadcast/events writes it (an SSE block) to every reader. The body is
// turned into one Buffer, then sent to each client as an ordinary `ws` program does
// (socket.send), and the 200 goes out after the last write.
// Prints "listening on http://127.0.0.1:<port>".

const http = require('node:http');
const path = require('node:path');
const { WebSocketServer } = require(path.join(__dirname, '..', '..', 'node_modules', 'ws'));

const readers = new Set();

const server = http.createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/events') {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    response.write('retry: 3000\n\n');
    readers.add(response);
    response.on('close', () => readers.delete(response));
    return;
  }
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks);
    if (request.url === '/broadcast/ws') {
      for (const socket of wss.clients) socket.send(body, { binary: false });
    } else if (request.url === '/broadcast/events') {
      for (const reader of readers) reader.write(body);
    } else {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
const wss = new WebSocketServer({ server, path: '/ws', perMessageDeflate: false });
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
