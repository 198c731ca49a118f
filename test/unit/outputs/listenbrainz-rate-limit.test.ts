import { MAX_RATE_LIMIT_HOLD_MS, rateLimitResetMs } from '../../../src/outputs/listenbrainz';

// Issue 54 (Low): one 429 with a huge X-RateLimit-Reset-In held the ListenBrainz output until svc
// restarted. A hold is at most MAX_RATE_LIMIT_HOLD_MS; the next call then asks again.

describe('X-RateLimit-Reset-In', () => {
  it.each([
    ['3', 3000],
    ['0.2', 200],
    ['0', 0],
    ['99999999999', MAX_RATE_LIMIT_HOLD_MS],
    ['1e300', MAX_RATE_LIMIT_HOLD_MS],
  ])('When ListenBrainz says %p, then the output holds %p ms', (value, held) => {
    expect(rateLimitResetMs({ 'x-ratelimit-reset-in': value })).toBe(held);
  });

  it.each(['-1', 'NaN', 'Infinity', 'soon'])('When the header is %p, then it is no hold', (value) => {
    expect(rateLimitResetMs({ 'x-ratelimit-reset-in': value })).toBeUndefined();
  });
});
