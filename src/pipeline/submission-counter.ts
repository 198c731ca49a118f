import type { MetricsPort } from '../metrics';

/** `svc_submissions_total` by outcome: `stored`, or the error code that refused it (docs/running.md "Metrics"). */
export function submissionCounter(metrics: MetricsPort): (outcome: string) => void {
  const submissions = metrics.counter('svc_submissions_total', 'Track submissions (HTTP and Icecast sources), by outcome: stored, or the error code.', [
    'outcome',
  ]);
  return (outcome) => submissions.inc({ outcome });
}
