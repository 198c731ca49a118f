import { randomBytes } from 'node:crypto';
import { redactUrl, type Logger } from '../../log';
import type { AppMiddleware } from '../context';

// One stderr line per request: method, path (secret redacted), status, milliseconds, request id.
// Bodies and headers are never logged: they may carry the secret.

export function logRequests(logger: Logger): AppMiddleware {
  const prefix = randomBytes(3).toString('hex');
  let counter = 0;
  return async function accessLog(ctx, next) {
    const started = process.hrtime.bigint();
    counter += 1;
    ctx.state.requestId = `${prefix}-${counter.toString(36)}`;
    ctx.set('X-Request-Id', ctx.state.requestId);
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info(`${ctx.method} ${redactUrl(ctx.originalUrl)} ${ctx.status} ${ms.toFixed(1)}ms id=${ctx.state.requestId}`);
    }
  };
}
