'use strict';
// The webhook receivers of outputs.bench.js in their own process, pinned to the load CPU: real
// receivers are on other machines, and nine of them in the bench process would delay its reading
// of the very POST answers it times. Driven over IPC:
//   -> {type: 'ready', ports: [...], holePort}   nine receivers and one black hole (accepts, never answers)
//   -> {type: 'arrival', dbid, at}               at: ms on the shared clock (performance.timeOrigin + now)
//   <- {type: 'stop'}
//   node bench/lib/webhook-receivers.js <count>

const http = require('node:http');
const net = require('node:net');

const COUNT = Number(process.argv[2] ?? 9);
const now = () => performance.timeOrigin + performance.now();
const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));

const receivers = Array.from({ length: COUNT }, () =>
  http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const at = now();
      try {
        const dbid = JSON.parse(Buffer.concat(chunks).toString('utf8')).data.dbid;
        process.send({ type: 'arrival', dbid, at });
      } catch {
        // Not ours: ignored.
      }
      res.writeHead(204).end();
    });
  }),
);
const held = new Set();
const hole = net.createServer((socket) => {
  held.add(socket);
  socket.on('error', () => undefined);
  socket.on('close', () => held.delete(socket));
});

Promise.all([...receivers.map(listen), listen(hole)]).then((ports) => {
  process.send({ type: 'ready', ports: ports.slice(0, COUNT), holePort: ports[COUNT] });
});
process.on('message', (message) => {
  if (message.type !== 'stop') return;
  held.forEach((socket) => socket.destroy());
  for (const server of [...receivers, hole]) server.close();
  process.disconnect();
});
