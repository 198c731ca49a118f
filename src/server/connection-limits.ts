import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log';
import { throttledLog } from '../log';

// decisions.md "Hostile clients and browsers", limits.maxConnections and
// limits.maxConnectionsPerAddress: idle WebSockets or slowloris connections from one address
// must not use up the descriptors everyone else needs. Past a cap a new connection is closed at
// once, and the server says so in its log (once a minute, not once per connection).

export interface ConnectionLimits {
  maxConnections: number;
  /** 0: no per-address cap (behind a reverse proxy every client shares its address). */
  maxConnectionsPerAddress: number;
}

export function limitConnections(server: http.Server, limits: ConnectionLimits, logger: Logger): void {
  const report = throttledLog((message) => logger.warn(message));
  // Node refuses past this before any JavaScript runs for the connection, and emits 'drop'.
  server.maxConnections = limits.maxConnections;
  server.on('drop', () => {
    report('maxConnections', `connection refused: ${limits.maxConnections} connections open (limits.maxConnections)`);
  });
  if (limits.maxConnectionsPerAddress === 0) return;

  const perAddress = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const open = perAddress.get(address) ?? 0;
    if (open >= limits.maxConnectionsPerAddress) {
      report(`perAddress`, `connection from ${address} refused: ${open} connections open from it (limits.maxConnectionsPerAddress)`);
      socket.destroy();
      return;
    }
    perAddress.set(address, open + 1);
    socket.once('close', () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
}
