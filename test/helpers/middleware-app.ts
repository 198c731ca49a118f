import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { createLogger, type Logger } from '../../src/log';
import type { AppContext, AppMiddleware, AppState } from '../../src/server/context';
import { handleErrors } from '../../src/server/middleware/errors';

// A Koa app of only the middleware a unit test names, behind svc's own error handler (so a
// refusal reads as the client would see it), on an ephemeral loopback port: one middleware
// file is tested alone, as hono tests each of its middleware.

export interface MiddlewareApp {
  url: string;
  close(): Promise<void>;
}

/** The handler at the end of the chain: by default `{"reached": true}` with what it saw of the request. */
export type Handler = (ctx: AppContext) => void | Promise<void>;

const reachedHandler: Handler = (ctx) => {
  ctx.body = { reached: true, ip: ctx.ip, body: (ctx.request as { body?: unknown }).body ?? null };
};

export async function serveMiddleware(
  chain: readonly AppMiddleware[],
  handler: Handler = reachedHandler,
  logger: Logger = createLogger(() => undefined),
): Promise<MiddlewareApp> {
  const app = new Koa<AppState>();
  app.silent = true;
  app.use(handleErrors(logger));
  for (const middleware of chain) app.use(middleware);
  app.use(async (ctx) => handler(ctx));
  const handle = app.callback();
  const server = http.createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A test's request still hanging on a route that never answers does not hold the close.
        server.closeAllConnections();
      }),
  };
}
