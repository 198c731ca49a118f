import { createHmac, randomUUID } from 'node:crypto';
import { AppError } from '../../errors';
import { authenticate } from '../../pipeline/authenticate';
import { carriesBody, parseSubmission, requestCredential } from '../../pipeline/parse';
import type { IdempotencyStore } from '../../store/idempotency';
import { sleep } from '../../signals';
import type { AppContext, AppMiddleware } from '../context';
import { rawRequestOf } from './body';
import { credentialHeader } from '../guards/credentials';

// Idempotency-Key on writes (docs/limits-and-load.md "Idempotency and retries"; the IETF httpapi draft "The
// Idempotency-Key HTTP Header Field"). The first request with a key runs; its 2xx answer is
// kept 24 h and a repeat gets it back, from any instance, without storing again. A repeat that
// comes while the first still runs here waits for its answer; one whose first request, run by
// another svc process, has stored its record is answered with that record at once (that process
// may have died after storing it: docs/decisions.md "Delivery promises"). A repeat with another request is 422. A first request
// that fails before storing frees the key, so a retry runs it again.

/** The draft's key is an sf-string; printable ASCII up to 255 characters covers every client we know. */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

/** How often a repeat looks for the first request's answer. */
const POLL_MS = 50;

export interface IdempotencyOptions {
  /** How long a repeat waits for a first request still running (then 409). */
  waitMs: number;
  /** A first request unanswered after this long is taken to have died with its instance. */
  leaseMs: number;
  /** The answer for a record a first request stored (null: it is gone); without it a repeat waits. */
  storedAnswer?: (dbid: number) => Promise<string | null>;
  /** The shared secret: a wrong one is 403 before any key is looked up ('' : none asked). */
  secret: string;
}

export function idempotent(store: IdempotencyStore, options: IdempotencyOptions): AppMiddleware {
  // Names this running server in the keys it takes: a first request of another one may have died with it.
  const owner = randomUUID();
  return async function withIdempotencyKey(ctx, next) {
    const key = ctx.get('Idempotency-Key');
    if (key === '') {
      await next();
      return;
    }
    if (!VALID_KEY.test(key)) throw new AppError('INVALID_PARAMETERS', 'Invalid Idempotency-Key: expected 1 to 255 printable ASCII characters');
    // A guess of the secret learns nothing from a key's stored answer (docs/security.md "Idempotency keys").
    authenticateFirst(ctx, options.secret);
    const request = ctx.request as { rawBody?: string };
    // What makes two requests "the same": method, path, query, body and credentials; an HMAC under
    // the database's own random key, so a stored fingerprint never reveals the secret in it.
    const fingerprint = createHmac('sha256', await store.fingerprintKey())
      .update(JSON.stringify([ctx.method, ctx.path, ctx.querystring, request.rawBody ?? '', credentialHeader(ctx)]))
      .digest('hex');
    const giveUpAt = Date.now() + options.waitMs;
    for (;;) {
      const claim = await store.claim(key, fingerprint, Date.now(), options.leaseMs, owner);
      if (claim.state === 'new') break;
      if (claim.fingerprint !== fingerprint) throw new AppError('IDEMPOTENCY_KEY_REUSED');
      if (claim.state === 'answered') {
        ctx.status = claim.status;
        if (claim.body !== '') {
          ctx.type = 'application/json';
          ctx.body = claim.body;
        }
        return;
      }
      const stored = claim.dbid === undefined || claim.owner === owner ? null : await options.storedAnswer?.(claim.dbid);
      if (stored) {
        ctx.status = 200;
        ctx.type = 'application/json';
        ctx.body = stored;
        return;
      }
      if (Date.now() >= giveUpAt) throw new AppError('IDEMPOTENCY_KEY_IN_USE');
      await sleep(POLL_MS);
    }
    try {
      await next();
    } catch (error) {
      await store.forget(key).catch(() => undefined);
      throw error;
    }
    // The write is done: a store that fails now costs the kept answer, never this one (a repeat
    // is still answered with the stored record's dbid).
    if (ctx.status >= 200 && ctx.status < 300) {
      const body = ctx.body === undefined || ctx.body === null ? '' : typeof ctx.body === 'string' ? ctx.body : JSON.stringify(ctx.body);
      await store.answer(key, ctx.status, body).catch(() => undefined);
    } else {
      await store.forget(key).catch(() => undefined);
    }
  };
}

/** The request's secret, checked as the route would check it (the body's `secret` for a POST or PATCH). */
function authenticateFirst(ctx: AppContext, secret: string): void {
  if (secret === '') return;
  const request = rawRequestOf(ctx);
  const credential = carriesBody(ctx.method) ? parseSubmission(request, { maxFields: Number.MAX_SAFE_INTEGER }).credential : requestCredential(request);
  authenticate(credential, secret);
}
