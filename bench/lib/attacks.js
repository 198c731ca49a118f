'use strict';
// The resource attacks of docs/security.md "Limits, and why these numbers", as plain sockets
// against a running svc: each opens its connections from loopback and holds them until stop().
// Used by bench/attack-memory.bench.js.

const net = require('node:net');

/** Connections that pipeline `GET /v1/status` as fast as the server reads, and never read the answers. */
function pipeliningNonReaders(url, count, { path = '/v1/status', localAddresses = ['127.0.0.1'] } = {}) {
  const { hostname, port } = new URL(url);
  const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`.repeat(256));
  const sockets = [];
  for (let i = 0; i < count; i += 1) {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress: localAddresses[i % localAddresses.length] });
    socket.pause();
    socket.on('error', () => undefined);
    const pump = () => {
      while (!socket.destroyed && socket.write(request));
    };
    socket.on('connect', pump);
    socket.on('drain', pump);
    sockets.push(socket);
  }
  return { sockets, stop: () => closeAll(sockets) };
}

/** Slowloris: connections that send one header byte every `intervalMs`, never finishing the request. */
function slowloris(url, count, { intervalMs = 5000, localAddresses = ['127.0.0.1'] } = {}) {
  const { hostname, port } = new URL(url);
  const sockets = [];
  for (let i = 0; i < count; i += 1) {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress: localAddresses[i % localAddresses.length] });
    socket.on('error', () => undefined);
    socket.on('connect', () => socket.write('GET /v1/status HTTP/1.1\r\nHost: localhost\r\nX-a: '));
    sockets.push(socket);
  }
  const timer = setInterval(() => {
    for (const socket of sockets) if (!socket.destroyed && socket.writable) socket.write('a');
  }, intervalMs);
  return {
    sockets,
    stop: () => {
      clearInterval(timer);
      return closeAll(sockets);
    },
  };
}

/** Connections that ask for a large cover `pipelined` times at once and then never read. */
function pausedCoverReaders(url, count, key, { localAddresses = ['127.0.0.1'], pipelined = 8 } = {}) {
  const { hostname, port } = new URL(url);
  const requests = `GET /cover/${key} HTTP/1.1\r\nHost: localhost\r\n\r\n`.repeat(pipelined);
  const sockets = [];
  for (let i = 0; i < count; i += 1) {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress: localAddresses[i % localAddresses.length] });
    socket.pause();
    socket.on('error', () => undefined);
    socket.on('connect', () => socket.write(requests));
    sockets.push(socket);
  }
  return { sockets, stop: () => closeAll(sockets) };
}

/**
 * Connections from one address that each ask /v1/events for a replay from the first record
 * (Last-Event-ID: 0), reading slowly: 4 KiB a second each, so every replay stays running.
 */
function slowSseReplayers(url, count, { localAddress = '127.0.0.1' } = {}) {
  const { hostname, port } = new URL(url);
  const request = 'GET /v1/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nLast-Event-ID: 0\r\n\r\n';
  const sockets = [];
  for (let i = 0; i < count; i += 1) {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress });
    socket.on('error', () => undefined);
    socket.on('connect', () => socket.write(request));
    socket.pause();
    sockets.push(socket);
  }
  const timer = setInterval(() => {
    for (const socket of sockets) socket.read(4096);
  }, 1000);
  return {
    sockets,
    stop: () => {
      clearInterval(timer);
      return closeAll(sockets);
    },
  };
}

function closeAll(sockets) {
  return Promise.all(
    sockets.map((socket) => new Promise((resolve) => {
      if (socket.destroyed) return resolve();
      socket.once('close', resolve);
      socket.destroy();
    })),
  );
}

/** The loopback addresses 127.0.0.1 .. 127.0.0.n: Linux routes all of 127/8 to lo. */
function loopbackAddresses(n) {
  return Array.from({ length: n }, (_, i) => `127.0.0.${i + 1}`);
}

module.exports = { pipeliningNonReaders, slowloris, pausedCoverReaders, slowSseReplayers, loopbackAddresses };
