import type { Delivery } from './output';

// Retry timing and HTTP outcomes (docs/outputs.md "Delivery"). Pure.

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 5 * 60 * 1000;

/** Exponential from 1 s, doubling per failed attempt, capped at 5 min; jitter in [half, whole]. */
function backoffMs(failedAttempts: number, random: number = Math.random()): number {
  const full = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, failedAttempts - 1));
  return Math.round(full / 2 + (full / 2) * random);
}

/** When a message that just failed goes next; the target's own wait wins when it names one. */
export function nextAttemptDelayMs(failedAttempts: number, retryAfterMs: number | undefined, random?: number): number {
  return retryAfterMs === undefined ? backoffMs(failedAttempts, random) : Math.max(0, retryAfterMs);
}

/** 5xx, 408 and 429 are worth another try; a redirect (never followed) and other 4xx are not. */
export function deliveryOfStatus(status: number, retryAfterMs?: number): Delivery {
  if (status >= 200 && status < 300) return { outcome: 'delivered', status };
  const error = `HTTP ${status}`;
  if (status >= 500 || status === 408 || status === 429)
    return retryAfterMs === undefined ? { outcome: 'retry', status, error } : { outcome: 'retry', status, error, retryAfterMs };
  if (status >= 300 && status < 400) return { outcome: 'failed', status, error: `${error}: a redirect (not followed; configure the final URL)` };
  return { outcome: 'failed', status, error };
}
