import { UpstreamError } from './http';
import { NO_METRICS, type CounterPort, type MetricsPort } from '../metrics';

// The negative cache of outside services (docs/title-first.md "Negative cache"): a service that
// timed out, answered 5xx or refused the connection is not asked again for a few minutes, so a
// dead service costs one timeout, not one per track. Answers already cached are still used.
// A service that said how long to wait (429 or 503 with Retry-After: MusicBrainz when busy) is
// left alone that long, never longer than the fixed pause.

/** How long a failed service is left alone. */
const FAILED_SERVICE_PAUSE_MS = 3 * 60 * 1000;

interface Failure {
  until: number;
}

export class ServiceHealth {
  private readonly failures = new Map<string, Failure>();

  private readonly lookups: CounterPort;
  private readonly failedLookups: CounterPort;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly pauseMs: number = FAILED_SERVICE_PAUSE_MS,
    metrics: MetricsPort = NO_METRICS,
  ) {
    this.lookups = metrics.counter('svc_enrichment_lookups_total', 'Requests to an outside music service (answers from the cache not counted), per service.', [
      'service',
    ]);
    this.failedLookups = metrics.counter('svc_enrichment_failures_total', 'Requests to an outside music service that failed, per service.', ['service']);
  }

  /** A request to `service` is about to go out (docs/running.md "Metrics"). */
  asked(service: string): void {
    this.lookups.inc({ service });
  }

  /** Throws the UpstreamError a lookup gets while `service` is paused after a failure. */
  check(service: string): void {
    const failure = this.failures.get(service);
    if (!failure) return;
    if (failure.until <= this.now()) {
      this.failures.delete(service);
      return;
    }
    const seconds = Math.ceil((failure.until - this.now()) / 1000);
    throw new UpstreamError(service, `skipped for ${seconds} s more after a failure`, { transient: true });
  }

  /** Records the outcome of a request that was not cancelled by its caller. */
  failed(service: string, error: unknown): void {
    this.failedLookups.inc({ service });
    if (!isServiceFailure(error)) return;
    const asked = error.retryAfterMs;
    const pause = asked === undefined ? this.pauseMs : Math.min(asked, this.pauseMs);
    this.failures.set(service, { until: this.now() + pause });
  }

  /** Services paused now, by name (GET /v1/status names them). */
  failing(): string[] {
    const now = this.now();
    return [...this.failures].filter(([, failure]) => failure.until > now).map(([service]) => service);
  }
}

/** A timeout, a refused or cut connection, a 5xx, or a 429 that named its wait: the service is not answering now. */
function isServiceFailure(error: unknown): error is UpstreamError {
  if (!(error instanceof UpstreamError)) return false;
  if (error.status === 429) return error.retryAfterMs !== undefined;
  return error.noAnswer || (error.status !== undefined && error.status >= 500);
}
