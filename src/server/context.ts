import type Koa from 'koa';

/** Request-scoped data, typed once so no handler needs a cast (style: avoid untyped ctx.state). */
export interface AppState {
  requestId: string;
  /** Arrival order of a submission, taken before its body is read. */
  receivedSeq?: number;
  /** The client went away mid-request: reported once a minute by the error middleware, not per request. */
  abortedByClient?: boolean;
  /** A route that answers a wrong secret itself (the Icecast listener callbacks) sets this, so that the failure budget counts it. */
  wrongSecret?: boolean;
}

export type AppContext = Koa.ParameterizedContext<AppState>;
export type AppMiddleware = Koa.Middleware<AppState>;
