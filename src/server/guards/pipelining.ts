import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// docs/decisions.md "Hostile clients and browsers": at most 8 pipelined requests in flight per
// connection, and reading pauses past that. A client that pipelines thousands of requests and
// never reads its answers used to get each one processed (a Koa context each, about 10 KB): one
// socket read of 64 KB is 1,500 small requests, 15 MB held per connection.
//
// Now requests past the eighth wait unprocessed and the socket stops being read until answers
// have been taken. Node still parses the whole read it already has, and each parsed request
// costs a few KB even unprocessed, so what may wait is bounded too: per connection, and
// process-wide within limits.maxQueuedBytes. A connection past either bound is closed: no
// browser or player pipelines at all, so only a flood ever reaches them.

/** Per connection, HTTP requests or /v1/images/ws requests (src/server/streams/ws/hub.ts) unanswered before reading pauses. */
export const MAX_REQUESTS_IN_FLIGHT = 8;
/** Parsed requests a connection may have waiting behind its 8 in flight. */
const MAX_WAITING_PER_CONNECTION = 64;
/** What one parsed, waiting request holds (IncomingMessage + ServerResponse), measured roughly. */
const WAITING_REQUEST_BYTES = 4096;
/** The answer that owned the socket when pipelining began was not tracked; count it as in flight. */
const UNTRACKED_HEAD = 1;

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

interface ConnectionState {
  inFlight: number;
  waiting: [IncomingMessage, ServerResponse][];
}

export interface PipeliningLimits {
  /** limits.maxQueuedBytes: waiting requests across all connections count against it. */
  maxQueuedBytes: number;
  /** Told when a connection is closed for pipelining past the bounds. */
  onFlood?: (address: string) => void;
}

export function limitRequestsInFlight(handle: Handler, limits: PipeliningLimits): Handler {
  const connections = new WeakMap<Socket, ConnectionState>();
  const maxWaitingTotal = Math.max(MAX_WAITING_PER_CONNECTION, Math.floor(limits.maxQueuedBytes / WAITING_REQUEST_BYTES));
  let waitingTotal = 0;

  const start = (state: ConnectionState, socket: Socket, request: IncomingMessage, response: ServerResponse) => {
    state.inFlight += 1;
    // 'close' follows 'finish' (the answer was handed to the kernel) or a dropped connection.
    response.once('close', () => {
      state.inFlight -= 1;
      const next = state.waiting.shift();
      if (next) {
        waitingTotal -= 1;
        if (socket.destroyed) return;
        start(state, socket, next[0], next[1]);
      } else if (state.inFlight + UNTRACKED_HEAD < MAX_REQUESTS_IN_FLIGHT && socket.isPaused()) socket.resume();
    });
    handle(request, response);
  };

  const closeFlood = (state: ConnectionState, socket: Socket) => {
    waitingTotal -= state.waiting.length;
    state.waiting = [];
    limits.onFlood?.(socket.remoteAddress ?? '');
    socket.destroy();
  };

  return function admit(request, response) {
    // Node hands a response its socket at once when nothing earlier is still being answered on
    // that connection: the common, unpipelined case needs no bookkeeping (the /v1/last hot path).
    // Such an untracked answer counts as one of the 8 through `UNTRACKED_HEAD`.
    if (response.socket) {
      handle(request, response);
      return;
    }
    const socket = request.socket;
    let state = connections.get(socket);
    if (!state) {
      const created: ConnectionState = { inFlight: 0, waiting: [] };
      state = created;
      connections.set(socket, created);
      // Node resumes a socket it paused itself once its own backlog drains; keep ours paused.
      socket.on('resume', () => {
        if (created.waiting.length > 0) socket.pause();
      });
    }
    if (socket.destroyed) return;
    if (state.inFlight + UNTRACKED_HEAD < MAX_REQUESTS_IN_FLIGHT) {
      start(state, socket, request, response);
      return;
    }
    if (state.waiting.length >= MAX_WAITING_PER_CONNECTION || waitingTotal >= maxWaitingTotal) {
      closeFlood(state, socket);
      return;
    }
    state.waiting.push([request, response]);
    waitingTotal += 1;
    socket.pause();
  };
}
