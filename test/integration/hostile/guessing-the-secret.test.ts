import { rawRequest } from '../../helpers/raw-http';
import { startTestServer } from '../../helpers/test-server';
import { storedCount } from '../../helpers/stored-count';
import { manualClock } from '../../helpers/manual-clock';
import { QUICK_DELAY_MS, quickThrottle, recordTurns, spacingOf, waitsOf } from '../../helpers/auth-turns';

// Round three, N2 on the HTTP API (docs/security.md "Guessing the secret"): failed secrets from
// one address are answered one turn at a time, spaced by a delay that doubles, whatever the
// number of connections; the log gets one summary line; another address is not slowed. The
// Icecast doors are in icecast-port.test.ts; the delays themselves in test/unit/domain/auth-throttle.test.ts.
// The server's throttle runs on short delays and a frozen clock (test/helpers/auth-turns.ts): the
// turns it hands out are read back, never timed.

const SECRET = 'the-real-secret-41';

describe('guessing the secret over HTTP', () => {
  it('When one address sends 8 wrong secrets at once after a wrong one, then they take 8 turns one delay apart or more, in one log line', async () => {
    const t = await startTestServer({ config: { secret: SECRET }, authThrottle: quickThrottle(manualClock()) });
    const turnsOf = recordTurns(t.server.authThrottle);
    try {
      const guess = (n: number) =>
        rawRequest(`${t.url}/v1/remoteinput`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-SVC-Client-Auth': `guess-${n}` },
          body: JSON.stringify({ artist: 'Evil', title: `Guess ${n}` }),
          localAddress: '127.0.0.11',
        });
      expect((await guess(0)).status).toBe(403);
      const statuses = await Promise.all(Array.from({ length: 8 }, async (_, index) => (await guess(index + 1)).status));
      expect(statuses).toEqual(Array(8).fill(403));
      // The first went at once; each of the 8 got its own turn, a delay (or a doubled one) after the one before.
      const [first, ...queued] = turnsOf('127.0.0.11');
      expect(first).toEqual({ waitMs: 0 });
      expect(queued).toHaveLength(8);
      expect(Math.min(...spacingOf(waitsOf(queued)))).toBeGreaterThanOrEqual(QUICK_DELAY_MS);
      expect(t.logs.filter((line) => line.includes('failed authentication on the HTTP API from 127.0.0.11'))).toHaveLength(1);
      expect(t.logs.join('\n')).not.toContain('guess-');
      // The DJ, from another address, is answered at once.
      const dj = await rawRequest(`${t.url}/v1/remoteinput?artist=DJ&title=Live`, { headers: { 'X-SVC-Client-Auth': SECRET } });
      expect(dj.status).toBe(200);
      expect(turnsOf('127.0.0.1')).toEqual([{ waitMs: 0 }]);
      expect(await storedCount(t.server.tracks)).toBe(1);
    } finally {
      await t.close();
    }
  });

  it('When the secret is a query parameter in another spelling, then a wrong one is throttled too', async () => {
    const t = await startTestServer({ config: { secret: SECRET }, authThrottle: quickThrottle(manualClock()) });
    const turnsOf = recordTurns(t.server.authThrottle);
    try {
      expect((await rawRequest(`${t.url}/v1/outputs?%73ecret=wrong-1`, { localAddress: '127.0.0.12' })).status).toBe(403);
      expect((await rawRequest(`${t.url}/v1/outputs?%73ecret=wrong-2`, { localAddress: '127.0.0.12' })).status).toBe(403);
      // The second waited the delay the first failure earned.
      expect(turnsOf('127.0.0.12')).toEqual([{ waitMs: 0 }, { waitMs: QUICK_DELAY_MS }]);
    } finally {
      await t.close();
    }
  });
});
