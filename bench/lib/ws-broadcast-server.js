'use strict';
// The fan-out baseline: a bare `ws` server with nothing else. POST /broadcast sends the request
// body as one text frame to every client, then answers 200, the order svc follows too.
// Prints "listening on http://127.0.0.1:<port>".

const http = require('node:http');
const path = require('node:path');
const { WebSocketServer } = require(path.join(__dirname, '..', '..', 'node_modules', 'ws'));

const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const frame = Buffer.concat(chunks).toString('utf8');
    for (const socket of wss.clients) socket.send(frame);
    response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
  });
});
const wss = new WebSocketServer({ server, perMessageDeflate: false });
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`));
