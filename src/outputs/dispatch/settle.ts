import type { AttemptResult, OutputMessage } from '../../store/outputs';
import { nextAttemptDelayMs } from '../backoff';
import type { Delivery } from '../output';

// Where a message goes after an attempt (docs/outputs.md "Delivery"): done, another try after
// the backoff while its `retryForSeconds` and the attempt cap allow, or given up; and the one log
// line each deserves. Pure but for the backoff's jitter.

export interface RetryRules {
  /** The output's `retryForSeconds`, in ms: no attempt is planned later than this after the change. */
  retryForMs: number;
  /** Attempts per message at most (MAX_ATTEMPTS_PER_MESSAGE). */
  maxAttempts: number;
}

export interface Settled {
  result: AttemptResult;
  log?: { level: 'info' | 'warn'; text: string };
}

/** The outcome of one attempt on `message` that started at `started` and ended at `at`. */
export function settle(output: string, message: OutputMessage, delivery: Delivery, span: { started: number; at: number }, rules: RetryRules): Settled {
  const { at } = span;
  const attempts = message.attempts + 1;
  const base = { at, durationMs: at - span.started, ...(delivery.status === undefined ? {} : { status: delivery.status }) };
  if (delivery.outcome === 'delivered') {
    const result: AttemptResult = { ...base, outcome: 'delivered', ...(delivery.receipt ? { receipt: delivery.receipt } : {}) };
    return message.attempts > 0
      ? { result, log: { level: 'info', text: `output ${output}: track ${message.dbid} delivered after ${attempts} attempts` } }
      : { result };
  }
  const nextAttemptAt = delivery.outcome === 'retry' ? at + nextAttemptDelayMs(attempts, delivery.retryAfterMs) : undefined;
  if (nextAttemptAt !== undefined && nextAttemptAt - message.createdAt <= rules.retryForMs && attempts < rules.maxAttempts) {
    const result: AttemptResult = { ...base, outcome: 'retry', error: delivery.error, nextAttemptAt };
    if (message.attempts > 0) return { result };
    return { result, log: { level: 'warn', text: `output ${output}: track ${message.dbid} not delivered (${delivery.error}); retrying` } };
  }
  const why = delivery.outcome === 'retry' ? `${delivery.error}; gave up after ${attempts} attempts` : delivery.error;
  return {
    result: { ...base, outcome: 'failed', error: why },
    log: { level: 'warn', text: `output ${output}: track ${message.dbid} ${message.kind} failed: ${why}` },
  };
}
