import { AuthThrottle } from '../../domain/auth-throttle';
import { AppError } from '../../errors';
import { throttledLog, type Logger } from '../../log';
import { sleep } from '../../signals';
import type { AppContext, AppMiddleware } from '../context';
import { requestGone } from '../guards/work-pool';
import { credentialHeader } from '../guards/credentials';

// The HTTP API's door to the shared secret, throttled per address (docs/security.md "Guessing
// the secret"): a request that may carry a secret waits its address's turn; a wrong secret makes
// the next turn come later; one summary line a minute per address says who is guessing.

/** One log line a minute per address and door for failed authentications, with how many more there were (an address's first failure at once). */
export function reportFailedAuthentication(logger: Logger): (door: string, address: string, failures: number, delayMs: number, outcome?: string) => void {
  const report = throttledLog((message) => logger.warn(message));
  return (door, address, failures, delayMs, outcome) =>
    report(
      `failed-authentication ${door} ${address}`,
      `failed authentication on ${door} from ${address}: ${failures} in a row from it; its next attempt waits ${(delayMs / 1000).toFixed(2)} s${outcome ? ` (${outcome})` : ''}`,
    );
}

/**
 * A door that keeps no caller waiting (the Icecast listener callbacks: Icecast holds the listener
 * until it is answered): an address whose turn has not come is refused at once with `headers`
 * (icecast-auth-user, so that the listener is still admitted), its secret not checked.
 */
export interface ImpatientDoor {
  name: string;
  headers: Readonly<Record<string, string>>;
}

export function throttleFailedAuthentication(
  secret: string,
  throttle: AuthThrottle,
  report: ReturnType<typeof reportFailedAuthentication>,
  impatient: (ctx: AppContext) => ImpatientDoor | undefined = () => undefined,
): AppMiddleware {
  return async function throttledAuthentication(ctx, next) {
    if (secret === '' || !mayCarrySecret(ctx)) {
      await next();
      return;
    }
    // One budget per real client on every door (ctx.ip: the socket, or the client a trusted proxy names).
    const address = ctx.ip;
    const door = impatient(ctx);
    const turn = throttle.turn(address);
    if ('refusedForMs' in turn || (door && turn.waitMs > 0)) {
      const retryMs = 'refusedForMs' in turn ? turn.refusedForMs : turn.waitMs;
      if (door) report(door.name, address, throttle.failureCount(address), retryMs, 'refused, nothing recorded');
      throw new AppError('TOO_MANY_FAILED_AUTHENTICATIONS', undefined, {
        headers: { ...door?.headers, 'Retry-After': String(Math.max(1, Math.ceil(retryMs / 1000))) },
      });
    }
    // A client that leaves while waiting its turn holds nothing (docs/security.md "Nothing outlives its client").
    if (turn.waitMs > 0)
      await sleep(turn.waitMs, requestGone(ctx.res)).catch((error: unknown) => {
        throw new AppError('REQUEST_ABORTED', undefined, { cause: error });
      });
    const failed = () => {
      const { failures, delayMs } = throttle.failed(address);
      report(door?.name ?? 'the HTTP API', address, failures, delayMs);
    };
    try {
      await next();
    } catch (error) {
      if (error instanceof AppError && error.code === 'INVALID_SECRET') failed();
      throw error;
    }
    if (ctx.state.wrongSecret) failed();
    else if (ctx.status < 400) throttle.succeeded(address);
  };
}

/** An auth header, a `secret` query parameter in any spelling, or a body (which may hold `secret`). */
function mayCarrySecret(ctx: AppContext): boolean {
  if (credentialHeader(ctx) !== '') return true;
  if (Object.keys(ctx.query).some((name) => name.toLowerCase().includes('secret'))) return true;
  return ctx.method === 'POST' || ctx.method === 'PUT' || ctx.method === 'PATCH' || ctx.method === 'DELETE';
}
