'use strict';
// The driver's side of a client fleet (bench/lib/ws-clients.js, spawned by the bench file with an
// IPC channel): waits until every client is connected, then answers when all of them have a frame.

/**
 * Resolves once the fleet says all its clients are connected. `received(dbid)` resolves with the
 * arrival time of the last client's frame for that dbid; `stop()` closes the fleet.
 */
async function connectFleet(child) {
  const arrivals = new Map();
  const waiters = new Map();
  /** The text of the last frame every client received (when the fleet reports it). */
  const fleet = { lastFrame: undefined };
  await new Promise((resolve, reject) => {
    child.on('message', (message) => {
      if (message.type === 'ready') resolve();
      else if (message.type === 'failed') reject(new Error(message.message));
      else if (message.type === 'all-received') {
        arrivals.set(message.dbid, message.last);
        if (message.frame !== undefined) fleet.lastFrame = message.frame;
        waiters.get(message.dbid)?.(message.last);
      }
    });
    child.once('exit', (code) => reject(new Error(`client fleet exited with ${code}`)));
  });
  return Object.assign(fleet, {
    child,
    received(dbid, timeoutMs = 10_000) {
      if (arrivals.has(dbid)) return Promise.resolve(arrivals.get(dbid));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not every client got frame ${dbid} within ${timeoutMs} ms`)), timeoutMs);
        waiters.set(dbid, (last) => {
          clearTimeout(timer);
          waiters.delete(dbid);
          resolve(last);
        });
      });
    },
    stop() {
      child.send('stop');
    },
  });
}

module.exports = { connectFleet };
