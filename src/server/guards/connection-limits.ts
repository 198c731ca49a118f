import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { ERRORS } from '../../errors';
import type { Logger } from '../../log';
import { throttledLog } from '../../log';
import { endWithError } from './raw-response';
import { SECURITY_HEADERS } from './security-headers';

// docs/decisions.md "Hostile clients and browsers", limits.maxConnections and
// limits.maxConnectionsPerAddress: idle WebSockets or slowloris connections from one address
// must not use up the descriptors everyone else needs. At the global cap the oldest connection
// that has not finished its first request's headers is closed to make room (docs/limits-and-load.md
// "Connections"): a client that really talks always gets in before one that only holds a slot.
// When every open connection has talked, the address holding the most connections loses its
// oldest idle one (no request being answered: an idle keep-alive or a quiet WebSocket), so a fresh
// address always gets /v1/status and /v1/last (docs/security.md "Nothing outlives its client"). A
// connection younger than SILENT_GRACE_MS is not closed for its silence: a burst of fresh clients
// at the cap would otherwise close each other, each the one before it, and 1 of 6 got an answer.
// Only when nothing can make room is a new one refused, and then with an answer (503 and
// Retry-After), never a bare close. The server says so in its log (once a minute).

export interface ConnectionLimits {
  maxConnections: number;
  /** 0: no per-address cap (behind a reverse proxy every client shares its address). */
  maxConnectionsPerAddress: number;
}

/** A silent connection is closed to make room only once it has been open this long (a real client sends its head at once). */
export const SILENT_GRACE_MS = 1000;
/** Connections taken past the cap only to be answered 503, at most this many at a time... */
const MAX_REFUSING = 64;
/** ...each closed this long after it came, answered or not. */
const REFUSING_LINGER_MS = 2000;

export interface ConnectionCaps {
  /** Wraps the request listener: a request on a connection taken past the cap is answered 503 here and never reaches the app. */
  guard(listener: http.RequestListener): http.RequestListener;
  /** Answers an upgrade on such a connection with the same 503; true when it did. */
  refusedUpgrade(socket: Duplex): boolean;
  /** Counts and limits the server's connections from now on. */
  watch(server: http.Server): void;
}

export interface ConnectionCapsOptions {
  /** `exemptFromPerAddress`: a trusted proxy (docs/running.md "Behind a proxy") carries every client behind it. */
  exemptFromPerAddress?: (address: string) => boolean;
  /** The clock of the silent grace (milliseconds). */
  now?: () => number;
  /** How long a fresh connection may stay silent before it can be closed to make room (default SILENT_GRACE_MS). */
  silentGraceMs?: number;
}

export function createConnectionCaps(limits: ConnectionLimits, logger: Logger, options: ConnectionCapsOptions = {}): ConnectionCaps {
  const exemptFromPerAddress = options.exemptFromPerAddress ?? (() => false);
  const now = options.now ?? (() => performance.now());
  const silentGraceMs = options.silentGraceMs ?? SILENT_GRACE_MS;
  const report = throttledLog((message) => logger.warn(message));
  // Connections that have not yet sent a whole request head, oldest first (a Set keeps insertion order), with when they came.
  const silent = new Map<Socket, number>();
  // Every connection by address, oldest first.
  const byAddress = new Map<string, Set<Socket>>();
  // Connections taken past the cap to be answered 503 (docs/limits-and-load.md "Connections").
  const refusing = new Set<Duplex>();
  let open = 0;

  /** The oldest idle connection of the address that holds the most, or undefined when none is idle. */
  const idleOfBusiestAddress = (): Socket | undefined => {
    const addresses = [...byAddress.values()].sort((a, b) => b.size - a.size);
    for (const sockets of addresses) {
      // A connection still without its request head is not idle: it is silent, and has its grace.
      for (const socket of sockets) if (!silent.has(socket) && isIdle(socket)) return socket;
    }
    return undefined;
  };

  /** The oldest connection still without a request head, when it has had its grace. */
  const oldestSilent = (): Socket | undefined => {
    const oldest = silent.entries().next();
    if (oldest.done || now() - oldest.value[1] < silentGraceMs) return undefined;
    return oldest.value[0];
  };

  /** Past the cap with nothing to close: the connection is kept just long enough for its 503. */
  const refuse = (socket: Socket, why: string): void => {
    if (refusing.size >= MAX_REFUSING) {
      report('maxConnections-closed', `connection refused without an answer: ${why}, and ${MAX_REFUSING} refusals already under way`);
      socket.destroy();
      return;
    }
    report('maxConnections', `connection answered 503: ${why}`);
    refusing.add(socket);
    const timer = setTimeout(() => socket.destroy(), REFUSING_LINGER_MS);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      refusing.delete(socket);
    });
  };

  const admitWithinTotal = (socket: Socket): boolean => {
    if (open < limits.maxConnections) return true;
    const silentOne = oldestSilent();
    const evicted = silentOne ?? idleOfBusiestAddress();
    if (!evicted) {
      refuse(socket, `${limits.maxConnections} connections open (limits.maxConnections), none idle or silent for ${silentGraceMs} ms`);
      return false;
    }
    const why = silentOne ? 'the oldest connection still without a request' : 'the oldest idle connection of the address holding the most';
    report('evicted', `closed ${why} (from ${evicted.remoteAddress ?? ''}): ${open} connections open (limits.maxConnections)`);
    silent.delete(evicted);
    evicted.destroy();
    return true;
  };

  const admitFromAddress = perAddressCap(limits, exemptFromPerAddress, report);

  const admit = (socket: Socket) => {
    if (!admitFromAddress(socket) || !admitWithinTotal(socket)) return;
    open += 1;
    silent.set(socket, now());
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
  };

  return {
    guard: (listener) =>
      function refuseOverCap(request, response) {
        if (!refusing.has(request.socket)) {
          listener(request, response);
          return;
        }
        answerTooManyConnections(request, response);
      },
    refusedUpgrade(socket) {
      if (!refusing.has(socket)) return false;
      endWithError(socket, 'TOO_MANY_CONNECTIONS', undefined, { 'Retry-After': '1' });
      return true;
    },
    watch(server) {
      const spoke = (request: http.IncomingMessage) => silent.delete(request.socket);
      server.on('request', spoke);
      server.on('upgrade', spoke);
      server.on('connection', admit);
    },
  };
}

/** limits.maxConnectionsPerAddress: past it, a new connection from that address is closed at once. */
function perAddressCap(
  limits: ConnectionLimits,
  exempt: (address: string) => boolean,
  report: (key: string, message: string) => void,
): (socket: Socket) => boolean {
  const perAddress = new Map<string, number>();
  return (socket: Socket): boolean => {
    const address = socket.remoteAddress ?? '';
    if (limits.maxConnectionsPerAddress === 0 || exempt(address)) return true;
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
}

/** The 503 of a request on a connection taken past the cap: `Connection: close`, so the socket goes with it. */
function answerTooManyConnections(request: http.IncomingMessage, response: http.ServerResponse): void {
  const body = JSON.stringify({ error: ERRORS.TOO_MANY_CONNECTIONS.message });
  response.writeHead(ERRORS.TOO_MANY_CONNECTIONS.status, {
    'Content-Type': 'application/json; charset=utf-8',
    ...SECURITY_HEADERS,
    'Retry-After': '1',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  response.end(request.method === 'HEAD' ? undefined : body);
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
