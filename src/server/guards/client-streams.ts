import type { IncomingMessage } from 'node:http';
import type { ProxyMatcher } from '../../domain/trusted-proxies';
import { requestClient } from '../middleware/client-address';

// limits.maxConnectionsPerAddress per real client behind a trusted proxy (docs/running.md "Behind
// a proxy"; docs/limits-and-load.md "Connections"). The connection cap (connection-limits.ts)
// counts sockets when they open, before any header, so it cannot tell the clients behind one
// nginx apart and exempts the proxy. What one client can hold for hours through the proxy is a
// stream: a WebSocket (/v1/images/ws, /wsstream, /wsartistfanartstream) or GET /v1/events. Those
// are counted here once their headers name the client, and past the cap a new one is answered
// 429 TOO_MANY_STREAMS (a 429 is no failure to nginx: the instance stays in, and the request is
// not moved on). Plain requests come and go on the proxy's kept-alive connections and are not
// counted; a client sending them fast meets the fair queue and rates instead.

export interface ClientStreams {
  /**
   * A stream request: true when it may open (counted, if its peer is a trusted proxy, until
   * `closed` emits 'close'); false when its client already holds the cap (remembered for refused()).
   */
  admit(request: IncomingMessage, closed: NodeJS.EventEmitter): boolean;
  /** Whether admit() said no to this request (the Koa chain answers it). */
  refused(request: IncomingMessage): boolean;
}

/** `limit` 0: no cap (limits.maxConnectionsPerAddress 0). */
export function clientStreams(limit: number, trusted: ProxyMatcher): ClientStreams {
  const open = new Map<string, number>();
  const refusedRequests = new WeakSet<IncomingMessage>();
  return {
    admit(request, closed) {
      if (limit === 0 || !trusted(request.socket.remoteAddress ?? '')) return true;
      const client = requestClient(request, trusted);
      const held = open.get(client) ?? 0;
      if (held >= limit) {
        refusedRequests.add(request);
        return false;
      }
      open.set(client, held + 1);
      closed.once('close', () => {
        const left = (open.get(client) ?? 1) - 1;
        if (left === 0) open.delete(client);
        else open.set(client, left);
      });
      return true;
    },
    refused: (request) => refusedRequests.has(request),
  };
}
