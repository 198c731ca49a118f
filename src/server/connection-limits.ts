import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log';
import { throttledLog } from '../log';

// docs/decisions.md "Hostile clients and browsers", limits.maxConnections and
// limits.maxConnectionsPerAddress: idle WebSockets or slowloris connections from one address
// must not use up the descriptors everyone else needs. At the global cap the oldest connection
// that has not finished its first request's headers is closed to make room (docs/limits-and-load.md
// "Connections"): a client that really talks always gets in before one that only holds a slot.
// Only when every open connection is a talking one is a new connection refused. The server says
// so in its log (once a minute, not once per connection).

export interface ConnectionLimits {
  maxConnections: number;
  /** 0: no per-address cap (behind a reverse proxy every client shares its address). */
  maxConnectionsPerAddress: number;
}

/**
 * `exemptFromPerAddress`: a trusted proxy (docs/running.md "Behind a proxy") carries every client
 * behind it, and which one a connection serves is known only from its requests' headers.
 */
export function limitConnections(
  server: http.Server,
  limits: ConnectionLimits,
  logger: Logger,
  exemptFromPerAddress: (address: string) => boolean = () => false,
): void {
  const report = throttledLog((message) => logger.warn(message));
  // Connections that have not yet sent a whole request head, oldest first (a Set keeps insertion order).
  const silent = new Set<Socket>();
  let open = 0;
  const spoke = (socket: Socket) => silent.delete(socket);
  server.on('request', (request: http.IncomingMessage) => spoke(request.socket));
  server.on('upgrade', (request: http.IncomingMessage) => spoke(request.socket));

  const admitWithinTotal = (socket: Socket): boolean => {
    if (open < limits.maxConnections) return true;
    const oldest = silent.values().next();
    if (oldest.done) {
      report('maxConnections', `connection refused: ${limits.maxConnections} connections open (limits.maxConnections), all of them talking`);
      socket.destroy();
      return false;
    }
    report(
      'evicted',
      `closed the oldest connection still without a request (from ${oldest.value.remoteAddress ?? ''}): ${open} connections open (limits.maxConnections)`,
    );
    silent.delete(oldest.value);
    oldest.value.destroy();
    return true;
  };

  const perAddress = new Map<string, number>();
  const admitFromAddress = (socket: Socket): boolean => {
    const address = socket.remoteAddress ?? '';
    if (limits.maxConnectionsPerAddress === 0 || exemptFromPerAddress(address)) return true;
    const fromAddress = perAddress.get(address) ?? 0;
    if (fromAddress >= limits.maxConnectionsPerAddress) {
      report(`perAddress`, `connection from ${address} refused: ${fromAddress} connections open from it (limits.maxConnectionsPerAddress)`);
      socket.destroy();
      return false;
    }
    perAddress.set(address, fromAddress + 1);
    socket.once('close', () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    return true;
  };

  server.on('connection', (socket: Socket) => {
    if (!admitFromAddress(socket) || !admitWithinTotal(socket)) return;
    open += 1;
    silent.add(socket);
    socket.once('close', () => {
      open -= 1;
      silent.delete(socket);
    });
  });
}
