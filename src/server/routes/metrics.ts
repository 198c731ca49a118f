import Router from '@koa/router';
import type { AppState } from '../context';
import type { PrometheusMetrics } from '../metrics';
import { requireSecret } from '../middleware/require-secret';

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
  const guard = deps.requireSecret ? [requireSecret(deps.secret, { bearer: true })] : [];
  router.get('/metrics', ...guard, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.type = deps.metrics.contentType;
    ctx.body = await deps.metrics.render();
  });
  return router;
}
