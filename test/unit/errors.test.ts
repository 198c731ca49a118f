import { ERRORS } from '../../src/errors';

describe('the error catalogue', () => {
  it('uses only the statuses of the docs/http-api.md "Errors" table (426 for a plain GET on the WebSocket path, 431 from the HTTP parser)', () => {
    // 421 and 503: docs/decisions.md "Hostile clients and browsers"; 429: a full song-request queue (docs/song-requests.md).
    const documented = [400, 403, 404, 405, 408, 409, 413, 415, 417, 421, 422, 426, 429, 431, 500, 503];
    for (const [code, spec] of Object.entries(ERRORS)) expect([code, documented.includes(spec.status)]).toEqual([code, true]);
  });

  it('keeps the exact 403 bodies of the docs/http-api.md "Errors" table', () => {
    expect(ERRORS.MISSING_SECRET.message).toBe('Missing secret in request');
    expect(ERRORS.INVALID_SECRET.message).toBe('Invalid secret');
  });

  it('never exposes a 5xx message, except the fixed 503 bodies of the docs/http-api.md "Errors" table', () => {
    for (const [code, spec] of Object.entries(ERRORS)) {
      if (spec.status >= 500)
        expect([code, spec.expose]).toEqual([
          code,
          code === 'DATABASE_UNAVAILABLE' || code === 'SERVER_BUSY' || code === 'TOO_MANY_CONNECTIONS' || code === 'STALE_READ_REFUSED',
        ]);
    }
    expect(ERRORS.DATABASE_UNAVAILABLE.message).toBe('Database unavailable');
  });
});
