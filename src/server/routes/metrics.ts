import Router from '@koa/router';
import { authenticate } from '../../pipeline/authenticate';
import { requestCredential } from '../../pipeline/parse';
import type { AppState } from '../context';
import { credentialHeader } from '../guards/credentials';
import type { PrometheusMetrics } from '../metrics';

// GET /metrics (docs/running.md "Metrics"): the Prometheus text format, only when metrics.enabled;
// with metrics.requireSecret the scrape gives the secret as a write does, or as
// `Authorization: Bearer <secret>` (Prometheus' `authorization` scrape setting).

export interface MetricsDeps {
  metrics: PrometheusMetrics;
  secret: string;
  requireSecret: boolean;
}

export function metricsRoutes(deps: MetricsDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/metrics', async (ctx) => {
    if (deps.requireSecret) {
      const bearer = /^Bearer (.+)$/i.exec(ctx.get('Authorization'))?.[1] ?? '';
      const given = credentialHeader(ctx) || bearer;
      authenticate(requestCredential({ method: 'GET', query: {}, authHeader: given }), deps.secret);
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.type = deps.metrics.contentType;
    ctx.body = await deps.metrics.render();
  });
  return router;
}
