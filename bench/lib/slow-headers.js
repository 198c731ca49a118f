'use strict';
// The slow-header flood of attack-fairness.bench.js in its own process, pinned to the load CPU:
// opening thousands of sockets in the prober's process would delay the prober itself, and the
// row would measure the bench, not the server.
//   node bench/lib/slow-headers.js <base url> <connections> <addresses>
// Connections come from 127.0.0.1 .. 127.0.0.<addresses>. Prints {"ready": n} once every
// connection attempt has settled (n connected), then holds them until SIGTERM. Loopback only.

const { slowloris, loopbackAddresses } = require('./attacks');
const { assertLoopbackUrl } = require('./loopback');

const [base, connectionsText, addressesText] = process.argv.slice(2);
assertLoopbackUrl(base);
const attack = slowloris(base, Number(connectionsText), { localAddresses: loopbackAddresses(Number(addressesText)), intervalMs: 60_000 });

let connected = 0;
Promise.all(
  attack.sockets.map(
    (socket) =>
      new Promise((resolve) => {
        socket.once('connect', () => {
          connected += 1;
          resolve();
        });
        socket.once('close', resolve);
      }),
  ),
).then(() => process.stdout.write(`${JSON.stringify({ ready: connected })}\n`));

process.on('SIGTERM', () => attack.stop().then(() => process.exit(0)));
