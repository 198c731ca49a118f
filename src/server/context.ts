import type Koa from 'koa';

/** Request-scoped data, typed once so no handler needs a cast (style: avoid untyped ctx.state). */
export interface AppState {
  requestId: string;
  /** Arrival order of a submission, taken before its body is read. */
  receivedSeq?: number;
}

export type AppContext = Koa.ParameterizedContext<AppState>;
export type AppMiddleware = Koa.Middleware<AppState>;
