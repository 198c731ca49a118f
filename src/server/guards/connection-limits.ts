import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../../log';
import { throttledLog } from '../../log';

// docs/decisions.md "Hostile clients and browsers", limits.maxConnections and
// limits.maxConnectionsPerAddress: idle WebSockets or slowloris connections from one address
// must not use up the descriptors everyone else needs. At the global cap the oldest connection
// that has not finished its first request's headers is closed to make room (docs/limits-and-load.md
// "Connections"): a client that really talks always gets in before one that only holds a slot.
// When every open connection has talked, the address holding the most connections loses its
// oldest idle one (no request being answered: an idle keep-alive or a quiet WebSocket), so a fresh
// address always gets /v1/status and /v1/last (docs/security.md "Nothing outlives its client"). Only when
// no connection is idle is a new one refused. The server says so in its log (once a minute).

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
  // Every connection by address, oldest first.
  const byAddress = new Map<string, Set<Socket>>();
  let open = 0;
  const spoke = (socket: Socket) => silent.delete(socket);
  server.on('request', (request: http.IncomingMessage) => spoke(request.socket));
  server.on('upgrade', (request: http.IncomingMessage) => spoke(request.socket));

  /** The oldest idle connection of the address that holds the most, or undefined when none is idle. */
  const idleOfBusiestAddress = (): Socket | undefined => {
    const addresses = [...byAddress.values()].sort((a, b) => b.size - a.size);
    for (const sockets of addresses) {
      for (const socket of sockets) if (isIdle(socket)) return socket;
    }
    return undefined;
  };

  const admitWithinTotal = (socket: Socket): boolean => {
    if (open < limits.maxConnections) return true;
    const oldestSilent = silent.values().next();
    const evicted = oldestSilent.done ? idleOfBusiestAddress() : oldestSilent.value;
    if (!evicted) {
      report('maxConnections', `connection refused: ${limits.maxConnections} connections open (limits.maxConnections), all of them answering requests`);
      socket.destroy();
      return false;
    }
    const why = oldestSilent.done ? 'the oldest idle connection of the address holding the most' : 'the oldest connection still without a request';
    report('evicted', `closed ${why} (from ${evicted.remoteAddress ?? ''}): ${open} connections open (limits.maxConnections)`);
    silent.delete(evicted);
    evicted.destroy();
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
    const address = socket.remoteAddress ?? '';
    const sockets = byAddress.get(address) ?? new Set<Socket>();
    sockets.add(socket);
    byAddress.set(address, sockets);
    socket.once('close', () => {
      open -= 1;
      silent.delete(socket);
      sockets.delete(socket);
      if (sockets.size === 0 && byAddress.get(address) === sockets) byAddress.delete(address);
    });
  });
}

/**
 * No answer in progress: Node's HTTP server attaches the response it is writing to its socket
 * (`_httpMessage`, the head of any pipelined ones) and detaches it when done; an upgraded or
 * kept-alive socket between requests has none. Read only at the cap, so the /v1/last hot path
 * pays nothing for it.
 */
function isIdle(socket: Socket): boolean {
  return (socket as Socket & { _httpMessage?: unknown })._httpMessage == null;
}
