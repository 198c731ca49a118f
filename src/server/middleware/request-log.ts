import { randomBytes } from 'node:crypto';
import { redactSecretQuery, type Logger } from '../../log';
import type { AppMiddleware } from '../context';

// One stderr line per request: method, path (secret redacted), status, milliseconds, request id.
// Bodies and headers are never logged: they may carry the secret.

/** Request ids unique within this process run: a random prefix and a counter. */
export function createRequestIds(): () => string {
  const prefix = randomBytes(3).toString('hex');
  let counter = 0;
  return () => {
    counter += 1;
    return `${prefix}-${counter.toString(36)}`;
  };
}

export function logAccess(logger: Logger, method: string, url: string, status: number, started: bigint, requestId: string): void {
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  logger.info(`${method} ${redactSecretQuery(url)} ${status} ${ms.toFixed(1)}ms id=${requestId}`);
}

export function logRequests(logger: Logger, nextRequestId: () => string): AppMiddleware {
  return async function accessLog(ctx, next) {
    const started = process.hrtime.bigint();
    ctx.state.requestId = nextRequestId();
    ctx.set('X-Request-Id', ctx.state.requestId);
    try {
      await next();
    } finally {
      if (!ctx.state.abortedByClient) logAccess(logger, ctx.method, ctx.originalUrl, ctx.status, started, ctx.state.requestId);
    }
  };
}
