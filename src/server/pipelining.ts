import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// decisions.md "Hostile clients and browsers": at most 8 pipelined requests in flight per
// connection, and reading pauses past that. A client that pipelines thousands of requests and
// never reads its answers used to get each one processed (a Koa context each, about 10 KB): one
// socket read of 64 KB is 3,000 small requests, 30 MB held per connection. Now requests past the
// eighth wait as Node parsed them, unprocessed, and the socket stops being read until answers
// have been taken.

export const MAX_REQUESTS_IN_FLIGHT = 8;

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

interface ConnectionState {
  inFlight: number;
  waiting: [IncomingMessage, ServerResponse][];
}

export function limitRequestsInFlight(handle: Handler, maxInFlight = MAX_REQUESTS_IN_FLIGHT): Handler {
  const connections = new WeakMap<Socket, ConnectionState>();

  const start = (state: ConnectionState, socket: Socket, request: IncomingMessage, response: ServerResponse) => {
    state.inFlight += 1;
    // 'close' follows 'finish' (the answer was handed to the kernel) or a dropped connection.
    response.once('close', () => {
      state.inFlight -= 1;
      const next = state.waiting.shift();
      if (next) start(state, socket, next[0], next[1]);
      else if (state.inFlight < maxInFlight && socket.isPaused()) socket.resume();
    });
    handle(request, response);
  };

  return function admit(request, response) {
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
    if (state.inFlight < maxInFlight) {
      start(state, socket, request, response);
      return;
    }
    state.waiting.push([request, response]);
    socket.pause();
  };
}
