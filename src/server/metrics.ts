import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { CounterPort, GaugeReading, Labels, MetricsPort } from '../metrics';

// The Prometheus side of the metrics port (docs/running.md "Metrics"), through prom-client: one
// registry per server, its counters and scrape-time gauges, plus prom-client's process metrics
// (event-loop lag, memory, CPU, handles) under their standard names.

export interface PrometheusMetrics {
  port: MetricsPort;
  /** The text exposition format, version 0.0.4. */
  render(): Promise<string>;
  contentType: string;
}

export function createPrometheusMetrics(): PrometheusMetrics {
  const registry = new Registry();
  // The event-loop lag is sampled every 10 ms by perf_hooks' histogram (prom-client's default).
  collectDefaultMetrics({ register: registry });
  // Gauges named like counters, which `promtool check metrics` refuses; nodejs_active_handles and
  // nodejs_active_requests (by type) and nodejs_active_resources say the same.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);
  const counters = new Map<string, CounterPort>();
  const port: MetricsPort = {
    counter(name, help, labelNames = []) {
      const known = counters.get(name);
      if (known) return known;
      const counter = new Counter({ name, help, labelNames: [...labelNames], registers: [registry] });
      const wrapped: CounterPort = { inc: (labels: Labels = {}, value = 1) => counter.inc({ ...labels }, value) };
      counters.set(name, wrapped);
      return wrapped;
    },
    gauge(name, help, labelNames, read) {
      new Gauge({
        name,
        help,
        labelNames: [...labelNames],
        registers: [registry],
        async collect() {
          const readings: GaugeReading = await read();
          this.reset();
          for (const [labels, value] of readings) this.set({ ...labels }, value);
        },
      });
    },
  };
  return { port, render: () => registry.metrics(), contentType: registry.contentType };
}

/**
 * The route a request path belongs to, as a label of bounded cardinality: parameters become
 * their names (`/v1/cover/:key`), and any path svc does not serve is `other`, so that a scanner
 * trying random paths cannot grow the metrics without bound. Pure.
 */
export function routeLabel(url: string): string {
  const path = url.split('?')[0] ?? '';
  for (const [pattern, label] of ROUTE_PATTERNS) if (pattern.test(path)) return label;
  return EXACT_ROUTES.has(path) ? path : 'other';
}

const EXACT_ROUTES = new Set([
  '/',
  '/slideshow',
  '/history',
  '/index.txt',
  '/favicon.ico',
  '/metrics',
  '/wsstream',
  '/wsartistfanartstream',
  '/v1/status',
  '/v1/last',
  '/v1/last.txt',
  '/v1/remoteinput',
  '/v1/remoteinput/end',
  '/v1/history',
  '/v1/events',
  '/v1/outputs',
  '/v1/requests',
  '/v1/icecast/listeners',
  '/v1/images/ws',
  '/v1/health/live',
  '/v1/health/ready',
  '/v1/lumia/version',
]);

const ROUTE_PATTERNS: readonly (readonly [RegExp, string])[] = [
  [/^\/v1\/cover\/[^/]+$/, '/v1/cover/:key'],
  [/^\/v1\/history\/[^/]+$/, '/v1/history/:dbid'],
  [/^\/v1\/reports\/[^/]+\/check$/, '/v1/reports/:format/check'],
  [/^\/v1\/reports\/[^/]+$/, '/v1/reports/:format'],
  [/^\/v1\/outputs\/[^/]+\/test$/, '/v1/outputs/:name/test'],
  [/^\/v1\/requests\/[^/]+$/, '/v1/requests/:id'],
  [/^\/assets\/[^/]+$/, '/assets/:file'],
];
