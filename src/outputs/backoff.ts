import type { Delivery } from './output';

// Retry timing and HTTP outcomes (docs/outputs.md "Delivery"). Pure.

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 5 * 60 * 1000;

/** Exponential from 1 s, doubling per failed attempt, capped at 5 min; jitter in [half, whole]. */
function backoffMs(failedAttempts: number, random: number = Math.random()): number {
  const full = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, failedAttempts - 1));
  return Math.round(full / 2 + (full / 2) * random);
}

/**
 * Attempts per message, whatever the waits: a target that keeps answering `Retry-After: 1` cannot
 * keep one message busy for a day (docs/outputs.md "Delivery").
 */
export const MAX_ATTEMPTS_PER_MESSAGE = 500;

/**
 * When a message that just failed goes next; the target's own wait wins when it names one of at
 * least the backoff floor (1 s). `Retry-After: 0`, a date in the past or Discord's
 * `retry_after: 0` mean the normal backoff, never an immediate retry.
 */
export function nextAttemptDelayMs(failedAttempts: number, retryAfterMs: number | undefined, random?: number): number {
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs) || retryAfterMs < FIRST_RETRY_MS) return backoffMs(failedAttempts, random);
  return retryAfterMs;
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
