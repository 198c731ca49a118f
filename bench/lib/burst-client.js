'use strict';
// The cover-burst client of instances.bench.js, in its own process pinned to the load CPU (so
// the 1,000 replies it reads never take CPU from the server under test). Driven over IPC:
//   {type: 'warm', base}               keeps BURST connections open to `base`, each having had
//                                      one GET /v1/status answered: overlays poll or stream, so
//                                      they already hold a connection when the cover changes
//   {type: 'burst', base, path, cold}  BURST GETs of `path` at once, on the warm connections
//                                      (cold: false) or each on a new connection (cold: true)
// Answers {type: 'done', id, times, reused} (times in ms; reused = fetches that went out on an
// already open connection) or {type: 'failed', id, message}.
//   node bench/lib/burst-client.js <count>
//
// HTTP/1.1 is written and read by hand on plain sockets: node:http's client costs about as much
// CPU per reply as the server does (measured: a bare node:http server answering 48 KiB from
// memory came out at p99 ~110 ms with it), and on one core the 1,000th reply would mostly wait
// for the client to read the 999 before it, which 1,000 browsers on their own machines do not.

const net = require('node:net');
const { performance } = require('node:perf_hooks');

const BURST = Number(process.argv[2]);
const HEAD_END = Buffer.from('\r\n\r\n');
/** base URL -> open sockets, each with one request in flight at most */
const pools = new Map();

function target(base) {
  const url = new URL(base);
  if (!/^(127\.\d+\.\d+\.\d+|\[::1\])$/.test(url.hostname)) throw new Error(`loopback only, got ${base}`);
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port), hostHeader: url.host };
}

function connect({ host, port }) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port, noDelay: true });
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * Sends one GET on the socket and resolves once its reply is read whole (status line,
 * Content-Length, that many body bytes). `close`: the reply ends with the connection.
 */
function exchange(socket, path, hostHeader, close) {
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    let status = 0;
    /** Body bytes still to come; null until the head is read. */
    let remaining = null;
    const done = (error) => {
      socket.off('data', onData);
      socket.off('error', done);
      socket.off('close', onClose);
      if (error) reject(error);
      else if (status !== 200) reject(new Error(`${path} answered ${status}`));
      else resolve();
    };
    const onClose = () => done(remaining === 0 ? undefined : new Error(`connection closed mid-reply to ${path}`));
    const onData = (chunk) => {
      if (remaining === null) {
        head = head.length ? Buffer.concat([head, chunk]) : chunk;
        const end = head.indexOf(HEAD_END);
        if (end < 0) return;
        const text = head.subarray(0, end).toString('latin1');
        status = Number(text.slice(9, 12));
        const length = /\r\ncontent-length: *(\d+)/i.exec(text);
        if (!length) return done(new Error(`${path}: no Content-Length in the reply`));
        remaining = Number(length[1]) - (head.length - end - HEAD_END.length);
      } else {
        remaining -= chunk.length;
      }
      if (remaining === 0 && !close) done();
      else if (remaining !== null && remaining < 0) done(new Error(`${path}: more bytes than Content-Length`));
    };
    socket.on('data', onData);
    socket.once('error', done);
    socket.once('close', onClose);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostHeader}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`);
  });
}

/** Opens connections until BURST are open; ones svc closed as idle (Node's keepAliveTimeout) are replaced. */
async function warm(base, attempt = 1) {
  const where = target(base);
  let pool = pools.get(base);
  if (!pool) {
    pool = new Set();
    pools.set(base, pool);
  }
  const opening = [];
  for (let i = pool.size; i < BURST; i += 1) {
    opening.push(
      connect(where).then((socket) => {
        pool.add(socket);
        socket.once('close', () => pool.delete(socket));
      }),
    );
  }
  await Promise.all(opening);
  // One request each: the server has read from every connection before the burst, as from an overlay's earlier polls.
  // A connection svc closes as idle just as it is reused fails here: it leaves the pool, and another is opened.
  const answered = await Promise.allSettled(
    [...pool].map((socket) =>
      exchange(socket, '/v1/status', where.hostHeader, false).catch((error) => {
        socket.destroy();
        throw error;
      }),
    ),
  );
  const failed = answered.filter((outcome) => outcome.status === 'rejected');
  if (failed.length > BURST / 10 || attempt >= 5) throw failed[0]?.reason ?? new Error(`only ${pool.size} connections stayed open`);
  await new Promise((resolve) => setImmediate(resolve));
  if (pool.size < BURST || failed.length > 0) return warm(base, attempt + 1);
  return { times: [], reused: 0 };
}

async function burst(base, path, cold) {
  const where = target(base);
  const sockets = cold ? [] : [...(pools.get(base) ?? [])].slice(0, BURST);
  if (!cold && sockets.length < BURST) throw new Error(`only ${sockets.length} warm connections`);
  const one = async (socket) => {
    const started = performance.now();
    const used = socket ?? (await connect(where));
    await exchange(used, path, where.hostHeader, cold);
    return performance.now() - started;
  };
  const times = await Promise.all(cold ? Array.from({ length: BURST }, () => one(null)) : sockets.map(one));
  return { times, reused: cold ? 0 : times.length };
}

process.on('message', (message) => {
  if (message === 'stop') {
    for (const pool of pools.values()) for (const socket of pool) socket.destroy();
    process.exit(0);
  }
  const work = message.type === 'warm' ? warm(message.base) : burst(message.base, message.path, message.cold);
  work.then(
    (result) => process.send({ type: 'done', id: message.id, ...result }),
    (error) => process.send({ type: 'failed', id: message.id, message: String(error.message ?? error) }),
  );
});
process.send({ type: 'ready' });
