import { rawRequest } from '../../helpers/raw-http';
import { until } from '../../helpers/eventually';
import { startTestServer } from '../../helpers/test-server';

// Issue 54 H1, M2 and L7: the Icecast listener callbacks (POST /v1/icecast/listeners) take part in
// the one failure budget of every door (docs/security.md "Guessing the secret"): a wrong secret
// there is counted against the real client's address and logged with it, a client whose turn has
// not come is refused at once without its secret being checked, and every answer, the refusal
// included, carries icecast-auth-user so that Icecast admits the listener. A forwarded address
// that is not an IP address is not a client of its own.

const SECRET = 'listener-door-secret-54';
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

const callback = (url: string, secret: string, localAddress: string, headers: Record<string, string> = {}) =>
  rawRequest(`${url}/v1/icecast/listeners?secret=${secret}`, {
    method: 'POST',
    headers: { ...FORM, ...headers },
    body: 'action=listener_add&server=localhost&port=8000&client=7&mount=%2Flive&ip=192.0.2.7&agent=x',
    localAddress,
  });

/** Sends bursts of ten wrong guesses at once until one is refused unchecked; answers every answer. */
async function guessUntilRefused(url: string, localAddress: string, headers: (n: number) => Record<string, string> = () => ({})) {
  const answers: Awaited<ReturnType<typeof callback>>[] = [];
  for (let burst = 0; burst < 20 && !answers.some((answer) => answer.status === 429); burst += 1) {
    answers.push(...(await Promise.all(Array.from({ length: 10 }, (_, n) => callback(url, `guess-${burst}-${n}`, localAddress, headers(burst * 10 + n))))));
  }
  return answers;
}

describe('the listener door and the failure budget (issue 54 H1, M2, L7)', () => {
  it('When one address guesses on the listener door, then it is counted and logged with its address, the next guess is refused unchecked with icecast-auth-user, and another address is not slowed', async () => {
    const t = await startTestServer({ config: { secret: SECRET } });
    try {
      // Bursts of wrong guesses: each answer admits the listener; only the first of a turn is checked (403),
      // those whose turn has not come are refused unchecked (429).
      const answers = await guessUntilRefused(t.url, '127.0.0.31');
      expect(answers.every((answer) => answer.headers['icecast-auth-user'] === '1')).toBe(true);
      expect(answers.filter((answer) => answer.status === 403).length).toBeGreaterThan(0);
      expect(answers.filter((answer) => answer.status === 429).length).toBeGreaterThan(0);
      expect(answers.every((answer) => answer.status === 403 || answer.status === 429)).toBe(true);
      await until(() => t.logs.some((line) => line.includes('failed authentication on the Icecast listener callbacks from 127.0.0.31: 1 in a row')));
      // Another address, Icecast's own, is answered at once and recorded.
      const icecast = await callback(t.url, SECRET, '127.0.0.32');
      expect(icecast.status).toBe(200);
      expect(JSON.parse(icecast.text)).toMatchObject({ action: 'listener_add' });
      expect(t.logs.join('\n')).not.toContain('guess-');
    } finally {
      await t.close();
    }
  });

  it('When a trusted proxy forwards made-up X-Forwarded-For values, then they are not clients: every guess counts against the proxy', async () => {
    const t = await startTestServer({ config: { secret: SECRET, trustProxy: ['127.0.0.33'] } });
    try {
      const answers = await guessUntilRefused(t.url, '127.0.0.33', (n) => ({ 'X-Forwarded-For': `not-an-address-${n}` }));
      expect(answers.filter((answer) => answer.status === 429).length).toBeGreaterThan(0);
      await until(() => t.logs.some((line) => line.includes('from 127.0.0.33: 1 in a row')));
      // A real address the proxy forwards is a client of its own, with its own budget.
      const real = await callback(t.url, SECRET, '127.0.0.33', { 'X-Forwarded-For': '198.51.100.9' });
      expect(real.status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
