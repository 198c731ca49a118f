import type { IncomingMessage } from 'node:http';
import bodyParser from 'koa-bodyparser';
import { isPlainObject } from '../../domain/plain-object';
import { AppError } from '../../errors';
import { carriesBody, type RawRequest } from '../../pipeline/parse';
import type { AppContext, AppMiddleware } from '../context';
import { credentialHeader } from '../guards/credentials';

// POST and PATCH bodies (docs/decisions.md): JSON with Content-Type application/json; a missing type or
// text/plain that parses as JSON is accepted too; form-encoded bodies are read like a query
// string. Anything else is 415. Bodies over maxBodyBytes are 413.

const FORM = 'application/x-www-form-urlencoded';

export function parseBody(maxBodyBytes: number): AppMiddleware[] {
  const options: bodyParser.Options & { onProtoPoisoning: 'remove' } = {
    // `__proto__` keys are removed fields (docs/decisions.md), not a reason to refuse the body.
    onProtoPoisoning: 'remove',
    enableTypes: ['json', 'form'],
    extendTypes: { json: ['application/json', 'application/*+json', 'text/plain'] },
    jsonLimit: String(maxBodyBytes),
    formLimit: String(maxBodyBytes),
    // Non-object JSON is parsed so the pipeline can answer with a precise 400.
    strict: false,
  };
  const parser = bodyParser(options) as unknown as AppMiddleware;

  const checkContentType: AppMiddleware = async function checkContentType(ctx, next) {
    if (!carriesBody(ctx.method)) {
      await next();
      return;
    }
    const declared = Number(ctx.get('Content-Length'));
    if (Number.isFinite(declared) && declared > maxBodyBytes) {
      throw new AppError('BODY_TOO_LARGE', `Request body too large (limit ${maxBodyBytes} bytes)`);
    }
    if (!ctx.get('Content-Type')) ctx.req.headers['content-type'] = 'application/json';
    if (!ctx.is('json', FORM, 'text/plain', 'application/*+json')) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported content type: send application/json or application/x-www-form-urlencoded');
    }
    await next();
  };
  return [checkContentType, explainDecodingFailures(parser)];
}

/**
 * A body whose Content-Encoding does not decode (zlib and brotli throw plain errors, with no
 * HTTP status) is the client's mistake: 400, not 500 (docs/decisions.md "Hostile clients and browsers").
 * Only errors raised before the parser hands on are the body's; later ones belong downstream.
 */
function explainDecodingFailures(parser: AppMiddleware): AppMiddleware {
  return async function parseEncodedBody(ctx, next) {
    let parsed = false;
    try {
      await parser(ctx, () => {
        parsed = true;
        return next();
      });
    } catch (error) {
      if (parsed) throw error;
      if (abortedByClient(ctx.req, error)) throw new AppError('REQUEST_ABORTED', undefined, { cause: error });
      const status = httpStatusOf(error);
      // Content types were checked before parsing, so a 415 here is inflation's: the encoding.
      if (status === 415 && ctx.get('Content-Encoding') !== '') {
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Unsupported content encoding: ${ctx.get('Content-Encoding').slice(0, 64)}`, { cause: error });
      }
      if (status === undefined) throw new AppError('INVALID_BODY_ENCODING', undefined, { cause: error });
      throw error;
    }
  };
}

/**
 * The client closed the connection before its body arrived (docs/several-instances.md "Clients
 * that drop mid-body"). raw-body says so as `request.aborted` when it was reading at that moment,
 * or `stream.not.readable` (a 500 of its own) when the request was gone before reading began:
 * PostgreSQL's arrival number is a round trip, and the client can leave during it.
 */
function abortedByClient(request: IncomingMessage, error: unknown): boolean {
  const type = typeof error === 'object' && error !== null && 'type' in error ? error.type : undefined;
  if (type === 'request.aborted') return true;
  return (type === 'stream.not.readable' || request.destroyed) && !request.complete;
}

function httpStatusOf(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'status' in error && typeof error.status === 'number' ? error.status : undefined;
}

export function isFormRequest(contentType: string): boolean {
  return contentType.split(';')[0]?.trim().toLowerCase() === FORM;
}

/** What the pipeline reads of a request: its query, its parsed body (POST, PATCH) and its credential header. */
export function rawRequestOf(ctx: AppContext): RawRequest {
  const withBody = carriesBody(ctx.method);
  const request = ctx.request as { body?: unknown; rawBody?: string };
  return {
    method: ctx.method,
    query: ctx.query,
    body: withBody ? request.body : undefined,
    rawBody: withBody ? request.rawBody : undefined,
    bodyIsForm: isFormRequest(ctx.get('Content-Type')),
    authHeader: credentialHeader(ctx),
  };
}

/** A route whose body must be a JSON object: 400 before anything reads it (declare after parseBody). */
export const requireObjectBody: AppMiddleware = async (ctx, next) => {
  if (!isPlainObject((ctx.request as { body?: unknown }).body)) throw new AppError('BODY_NOT_OBJECT');
  await next();
};
