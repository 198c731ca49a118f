import Router from '@koa/router';
import { AppError } from '../../errors';
import type { AppState } from '../context';
import type { EventStream, OpenStream } from '../streams/sse/event-stream';
import { parseEventId } from '../streams/sse/frames';
import { requestGone } from '../guards/work-pool';

// GET /v1/events (docs/chat-bots-and-obs.md "Server-Sent Events"): no auth, CORS from the app's
// middleware. `Last-Event-ID` (what EventSource sends when it reconnects) wins over `?since=`
// (what a page or `curl -N` names the first time).

export const STREAM_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  // nginx passes the stream on as it comes instead of buffering it (docs/chat-bots-and-obs.md).
  'X-Accel-Buffering': 'no',
};

/** `forChannel`: the stream of a `?channel=` (docs/channels.md "Now playing per channel"); without it every reader gets `stream`. */
export function eventRoutes(all: EventStream, forChannel?: (given: string | string[] | undefined) => EventStream): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  router.get('/events', async (ctx) => {
    const stream = forChannel ? forChannel(ctx.query.channel) : all;
    const since = startingPoint(ctx.get('Last-Event-ID'), ctx.query.since);
    if (ctx.method === 'HEAD') {
      ctx.set(STREAM_HEADERS);
      ctx.status = 200;
      return;
    }
    // The first replay piece is read before anything is written: a replay the busy server cannot
    // serve now is a short stream that sends the reader back with its own id (sse/frames.ts
    // busyAnswer), never a stream that starts at the current track as if nothing was missed. `ctx.ip` is the real
    // client behind a trusted proxy (middleware/client-address.ts): its turn in the fair queue.
    const gone = requestGone(ctx.res);
    let start: OpenStream;
    try {
      start = await stream.open(since, ctx.ip, gone);
    } catch (error) {
      if (!gone.aborted) throw error;
      // The reader hung up while its replay waited for the pool: nobody to answer, nothing to log.
      ctx.state.abortedByClient = true;
      ctx.respond = false;
      return;
    }
    ctx.set(STREAM_HEADERS);
    ctx.status = 200;
    ctx.respond = false;
    const response = ctx.res;
    response.writeHead(200);
    // No Nagle delay between an event and the next: each goes out as it is written.
    ctx.req.socket.setNoDelay(true);
    start(response);
  });
  return router;
}

/**
 * The dbid to replay after, or undefined (no replay: the current track only). Throws the 400
 * AppError of a bad `since`. Shared with the fast path (server/fast-paths/events-fast-path.ts).
 */
export function startingPoint(lastEventId: string, since: string | string[] | undefined): number | undefined {
  // A Last-Event-ID that is not one of ours (another server's stream) means nothing here.
  const fromHeader = parseEventId(lastEventId || undefined);
  if (fromHeader !== undefined) return fromHeader;
  if (since === undefined) return undefined;
  if (Array.isArray(since)) throw new AppError('INVALID_PARAMETERS', "Repeated query parameter 'since'");
  const dbid = parseEventId(since);
  if (dbid === undefined) throw new AppError('INVALID_PARAMETERS', "Invalid 'since': expected a dbid (a non-negative integer)");
  return dbid;
}
