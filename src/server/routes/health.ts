import Router from '@koa/router';
import type { AppState } from '../context';

// Health for load balancers (docs/several-instances.md "Health checks"): cheap, no auth, a status
// word only. `live`: the process answers. `ready`: it can take writes now; 503 while the database
// is unreachable or silent (store/health.ts, store/postgres/liveness.ts) or shutdown has begun, so
// a balancer sends writes elsewhere. /v1/status stays 200 either way (it also serves what it knows).

export interface HealthDeps {
  /** Why this instance cannot take writes now, or null when it can. */
  notReadyBecause: () => string | null;
}

const LIVE = JSON.stringify({ status: 'ok' });
const READY = JSON.stringify({ status: 'ok' });

export function healthRoutes(deps: HealthDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/health' });
  router.get('/live', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'application/json';
    ctx.body = LIVE;
  });
  router.get('/ready', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'application/json';
    const reason = deps.notReadyBecause();
    if (reason === null) {
      ctx.body = READY;
      return;
    }
    ctx.status = 503;
    ctx.set('Retry-After', '1');
    ctx.body = JSON.stringify({ status: reason });
  });
  return router;
}
