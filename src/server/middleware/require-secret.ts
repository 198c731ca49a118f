import { AppError } from '../../errors';
import { authenticate } from '../../pipeline/authenticate';
import { requestCredential, requestCredentialWithBody, type Credential } from '../../pipeline/parse';
import type { AppContext, AppMiddleware } from '../context';
import { credentialHeader } from '../guards/credentials';

// The shared secret as one route-level middleware, declared on the routes that need it (docs/http-api.md;
// docs/decisions.md "HTTP behaviour"). It reads the credential the way a write does (a non-empty
// header decides alone, else the JSON body's `secret` where `body` is set, else `?secret=`), and
// throws MISSING_SECRET or INVALID_SECRET (pipeline/authenticate.ts): the error middleware answers
// them and the failure budget (middleware/auth-throttle.ts) counts a wrong one. Declared after
// parseBody where the body may carry the secret.

export interface RequireSecretOptions {
  /** The body's `secret` field is a carrier (declare after parseBody). */
  body?: boolean;
  /** `Authorization: Bearer <secret>` is a carrier after the credential headers (Prometheus' scrape setting); the query is not read. */
  bearer?: boolean;
  /** No secret configured refuses the route with MISSING_SECRET and this message, instead of letting everyone in. */
  unsetMessage?: string;
}

export function requireSecret(secret: string, options: RequireSecretOptions = {}): AppMiddleware {
  return async function secretRequired(ctx, next) {
    if (secret === '' && options.unsetMessage !== undefined) throw new AppError('MISSING_SECRET', options.unsetMessage);
    authenticate(secretCredential(ctx, options), secret);
    await next();
  };
}

/** The request's credential as `requireSecret` reads it. */
export function secretCredential(ctx: AppContext, options: RequireSecretOptions = {}): Credential | null {
  if (options.bearer) {
    const bearer = /^Bearer (.+)$/i.exec(ctx.get('Authorization'))?.[1] ?? '';
    return requestCredential({ method: ctx.method, query: {}, authHeader: credentialHeader(ctx) || bearer });
  }
  const request = { method: ctx.method, query: ctx.query, authHeader: credentialHeader(ctx) };
  return options.body ? requestCredentialWithBody({ ...request, body: ctx.request.body }) : requestCredential(request);
}
