import { AppError, ERRORS, type ErrorCode } from '../../errors';
import { throttledLog, type Logger } from '../../log';
import type { AppContext, AppMiddleware } from '../context';
import { SECURITY_HEADERS } from '../guards/security-headers';

// First in the chain: every error becomes `{"error": "..."}` with the catalogue's status.
// A 5xx is logged once with the request id and never shows its internals to the client.
// The answer starts from clean headers, as koa's own ctx.onerror does: an ETag, Cache-Control or
// Content-Disposition set before the error never describes the error's body.

/** Statuses that the body parser (raw-body, co-body) raises, mapped to our catalogue. */
const HTTP_STATUS_CODES: Readonly<Record<number, ErrorCode>> = {
  400: 'INVALID_JSON',
  413: 'BODY_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

export function handleErrors(logger: Logger): AppMiddleware {
  // A client that drops mid-body is its own event, and twenty of them are one line a minute.
  const reportAborted = throttledLog((message) => logger.warn(message));
  return async function errorResponder(ctx, next) {
    try {
      await next();
    } catch (error) {
      const answer = errorAnswer(error);
      if (answer.code === 'REQUEST_ABORTED') {
        ctx.state.abortedByClient = true;
        reportAborted('request-aborted', `${ctx.method} ${ctx.path}: the client closed the connection before its request body arrived; nothing stored`);
      }
      clearHeaders(ctx);
      ctx.status = answer.status;
      ctx.set(answer.headers);
      ctx.body = answer.body;
      logUnexpected(logger, ctx.state.requestId, answer, error);
    }
  };
}

/** What an error is answered with: the catalogue's status, the error's own headers, the JSON body. */
export interface ErrorAnswer {
  code: ErrorCode;
  status: number;
  headers: Readonly<Record<string, string>>;
  body: { error: string };
  /** A 5xx whose message is not exposed: logged with its cause. */
  unexpected: boolean;
}

/**
 * The answer to any error, as this middleware gives it; pure. Also used by the /v1/events fast
 * path (server/fast-paths/events-fast-path.ts), which answers before Koa.
 */
export function errorAnswer(error: unknown): ErrorAnswer {
  const appError = toAppError(error);
  return {
    code: appError.code,
    status: appError.status,
    headers: appError.headers,
    body: { error: appError.expose ? appError.message : ERRORS.INTERNAL.message },
    unexpected: appError.status >= 500 && !appError.expose,
  };
}

/**
 * Logs the cause of an unexpected failure once, next to the request id. An exposed 5xx (503
 * Database unavailable) is an expected failure, already logged once a minute where it happened;
 * a stack per request would flood the log.
 */
export function logUnexpected(logger: Logger, requestId: string, answer: ErrorAnswer, error: unknown): void {
  if (!answer.unexpected) return;
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  logger.error(`request ${requestId} failed: ${detail}`);
}

/** Headers that belong to the request rather than to the failed answer, so they stay: its id and CORS. */
const STANDING_HEADER = /^(x-request-id|vary|access-control-.*)$/;

/** Removes every header but the standing ones, then writes the security headers again. */
function clearHeaders(ctx: AppContext): void {
  if (ctx.headerSent) return;
  for (const name of ctx.res.getHeaderNames()) {
    if (!STANDING_HEADER.test(name)) ctx.res.removeHeader(name);
  }
  ctx.set(SECURITY_HEADERS);
}

function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const status = typeof error === 'object' && error !== null && 'status' in error ? Number(error.status) : NaN;
  const code = HTTP_STATUS_CODES[status];
  if (code) {
    const tooLarge = code === 'BODY_TOO_LARGE' && typeof error === 'object' && error !== null && 'limit' in error;
    const message = tooLarge ? `Request body too large (limit ${String(error.limit)} bytes)` : undefined;
    return new AppError(code, message, { cause: error });
  }
  return new AppError('INTERNAL', undefined, { cause: error });
}
