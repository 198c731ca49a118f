'use strict';
// The targets of outputs-mixed.bench.js in their own process, pinned to the load CPU (as
// webhook-receivers.js, for the same reason): two webhook receivers, two directory (url)
// receivers, two RDS encoders (TCP line receivers), an OBS WebSocket server (obs-websocket 5
// without a password: Hello, Identify, SetInputSettings answered), a ListenBrainz submit
// endpoint, and two DLS files watched in a directory. Each reports when a track's title arrived:
//   -> {type: 'ready', webhooks: [port, port], urls: [port, port], rds: [port, port], obs: port, listenbrainz: port}
//   -> {type: 'arrival', kind, title, at}    at: ms on the shared clock (performance.timeOrigin + now)
//   <- {type: 'stop'}
//   node bench/lib/reach-receivers.js <dls directory>

const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');
const { WebSocketServer } = require('ws');

const DLS_DIR = process.argv[2];
const now = () => performance.timeOrigin + performance.now();
const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
const arrived = (kind, title) => process.send({ type: 'arrival', kind, title, at: now() });

function httpReceiver(kind, titleOf) {
  return http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const title = titleOf(req, Buffer.concat(chunks).toString('utf8'));
        if (title) arrived(kind, title);
      } catch {
        // Not ours: ignored.
      }
      res.writeHead(kind === 'listenbrainz' ? 200 : 204, { 'content-type': 'application/json' }).end(kind === 'listenbrainz' ? '{"status":"ok"}' : '');
    });
  });
}

const webhooks = [0, 1].map(() => httpReceiver('webhook', (_req, body) => JSON.parse(body).data.title));
const urls = [0, 1].map(() => httpReceiver('url', (req) => new URL(req.url, 'http://x').searchParams.get('title')));
const listenbrainz = httpReceiver('listenbrainz', (_req, body) => {
  const parsed = JSON.parse(body);
  return parsed.listen_type === 'playing_now' ? parsed.payload[0].track_metadata.track_name : undefined;
});
const encoders = [0, 1].map(() =>
  net.createServer((socket) => {
    socket.setEncoding('latin1');
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      for (const line of chunk.split('\r\n')) if (line.startsWith('TEXT=')) arrived('rds', line.slice('TEXT='.length).replace(/^Bench Artist - /, ''));
      socket.end();
    });
  }),
);
const obsServer = http.createServer();
const obs = new WebSocketServer({ server: obsServer, handleProtocols: () => 'obswebsocket.json' });
obs.on('connection', (socket) => {
  socket.send(JSON.stringify({ op: 0, d: { obsWebSocketVersion: '5.1.0', rpcVersion: 1 } }));
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString('utf8'));
    if (message.op === 1) socket.send(JSON.stringify({ op: 2, d: { negotiatedRpcVersion: 1 } }));
    if (message.op !== 6) return;
    const text = message.d.requestData?.inputSettings?.text;
    if (typeof text === 'string') arrived('obs', text.replace(/^Bench Artist - /, ''));
    socket.send(JSON.stringify({ op: 7, d: { requestType: message.d.requestType, requestId: message.d.requestId, requestStatus: { result: true, code: 100 } } }));
  });
});
const seen = new Map();
const watcher = fs.watch(DLS_DIR, (_event, name) => {
  if (!name || name.startsWith('.')) return;
  let label;
  try {
    label = fs.readFileSync(path.join(DLS_DIR, name), 'utf8').split('\n').at(-2);
  } catch {
    return;
  }
  if (!label || seen.get(name) === label) return;
  seen.set(name, label);
  arrived('dls', label.replace(/^Bench Artist - /, ''));
});

Promise.all([...webhooks, ...urls, ...encoders, obsServer, listenbrainz].map(listen)).then(([w1, w2, u1, u2, r1, r2, obsPort, lbPort]) => {
  process.send({ type: 'ready', webhooks: [w1, w2], urls: [u1, u2], rds: [r1, r2], obs: obsPort, listenbrainz: lbPort });
});
process.on('message', (message) => {
  if (message.type !== 'stop') return;
  watcher.close();
  for (const client of obs.clients) client.terminate();
  for (const server of [...webhooks, ...urls, ...encoders, obsServer, listenbrainz]) {
    server.close();
    if (server.closeAllConnections) server.closeAllConnections();
  }
  process.disconnect();
});
