import { deliveryOfStatus, nextAttemptDelayMs } from '../../../src/outputs/backoff';

// Retry timing and HTTP outcomes (docs/outputs.md "Delivery").

describe('retry timing', () => {
  it('When attempts fail, then the wait doubles from 1 s with jitter in [half, whole], capped at 5 min', () => {
    expect([1, 2, 3].map((attempts) => nextAttemptDelayMs(attempts, undefined, 1))).toEqual([1000, 2000, 4000]);
    expect(nextAttemptDelayMs(1, undefined, 0)).toBe(500);
    expect(nextAttemptDelayMs(30, undefined, 1)).toBe(5 * 60 * 1000);
    expect(nextAttemptDelayMs(5, 2000)).toBe(2000);
  });

  it('When a target answers, then 2xx delivers; 5xx, 408, 429 retry; a redirect and other 4xx fail', () => {
    expect(deliveryOfStatus(204).outcome).toBe('delivered');
    expect([500, 503, 408, 429].map((status) => deliveryOfStatus(status).outcome)).toEqual(['retry', 'retry', 'retry', 'retry']);
    expect(deliveryOfStatus(429, 2000)).toMatchObject({ retryAfterMs: 2000 });
    expect([301, 307, 400, 401, 404, 410].map((status) => deliveryOfStatus(status).outcome)).toEqual(Array(6).fill('failed'));
  });
});
