import type { AppMiddleware } from '../../../../src/server/context';
import { refuseCrossSiteWrites, refuseUnknownHosts, securityHeaders } from '../../../../src/server/middleware/guards';
import { hostCheck } from '../../../../src/server/guards/request-guards';
import { SECURITY_HEADERS } from '../../../../src/server/guards/security-headers';
import { rawRequest } from '../../../helpers/raw-http';
import { serveMiddleware, type MiddlewareApp } from '../../../helpers/middleware-app';

// src/server/middleware/guards.ts alone: the Koa faces of the checks in
// src/server/guards/request-guards.ts (docs/decisions.md "Hostile clients and browsers").

describe('the guard middleware', () => {
  const apps: MiddlewareApp[] = [];
  const serve = async (chain: AppMiddleware[]) => {
    const app = await serveMiddleware(chain);
    apps.push(app);
    return app.url;
  };
  afterAll(() => Promise.all(apps.map((app) => app.close())));
  const answer = (res: { status: number; text: string }) => [res.status, JSON.parse(res.text) as unknown];

  describe('refuseUnknownHosts', () => {
    let url: string;
    let open: string;
    beforeAll(async () => {
      url = await serve([refuseUnknownHosts(hostCheck('127.0.0.1', ['radio.example']))]);
      // A listener on every address answers to any name: no check at all.
      open = await serve([refuseUnknownHosts(hostCheck('0.0.0.0', []))]);
    });

    it('When a loopback listener is asked for a name it does not answer to (DNS rebinding), then 421 names the config key', async () => {
      const res = await rawRequest(url, { headers: { Host: 'attacker.example:8899' } });
      expect(answer(res)).toEqual([
        421,
        { error: 'Unknown host: attacker.example:8899 (to answer to this name, add "attacker.example" to allowedHosts in the config)' },
      ]);
    });

    it('When the Host is a loopback name, a listed one, or absent (HTTP/1.0 tools), then the route runs', async () => {
      for (const host of ['127.0.0.1:8899', 'localhost:8899', '[::1]:8899', 'radio.example']) {
        expect((await rawRequest(url, { headers: { Host: host } })).status).toBe(200);
      }
      expect((await rawRequest(url, { headers: { Host: '' } })).status).toBe(200);
    });

    it('When the listener is not on loopback, then any Host is answered', async () => {
      expect((await rawRequest(open, { headers: { Host: 'anything.example' } })).status).toBe(200);
    });
  });

  describe('refuseCrossSiteWrites', () => {
    let url: string;
    beforeAll(async () => {
      url = await serve([refuseCrossSiteWrites(['https://studio.example'])]);
    });
    const own = () => `http://${new URL(url).host}`;

    it('When a page on another origin writes, with or without a secret, then 403 and the route never runs', async () => {
      const res = await rawRequest(`${url}/v1/remoteinput?secret=s`, { method: 'POST', headers: { Origin: 'https://evil.example' } });
      expect(answer(res)).toEqual([403, { error: 'Cross-site request refused' }]);
      // A GET of /v1/remoteinput submits: it is a write too. An <img> sends no Origin, only Sec-Fetch-Site.
      const img = await rawRequest(`${url}/v1/remoteinput?artist=A`, { headers: { 'Sec-Fetch-Site': 'cross-site' } });
      expect(img.status).toBe(403);
      expect((await rawRequest(`${url}/v1/history/1`, { method: 'DELETE', headers: { 'Sec-Fetch-Site': 'same-site' } })).status).toBe(403);
    });

    it('When the write comes from no browser, its own origin or a listed one, then the route runs', async () => {
      expect((await rawRequest(`${url}/v1/remoteinput`, { method: 'POST' })).status).toBe(200);
      expect((await rawRequest(`${url}/v1/remoteinput`, { method: 'POST', headers: { Origin: own(), 'Sec-Fetch-Site': 'same-origin' } })).status).toBe(200);
      expect(
        (await rawRequest(`${url}/v1/remoteinput`, { method: 'POST', headers: { Origin: 'https://studio.example', 'Sec-Fetch-Site': 'cross-site' } })).status,
      ).toBe(200);
    });

    it('When a browser navigates to a write or to a report, then 403 with what to do instead, even from its own origin', async () => {
      const navigate = { 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document', 'Sec-Fetch-Site': 'none' };
      expect(answer(await rawRequest(`${url}/v1/remoteinput?artist=A`, { headers: navigate }))).toEqual([
        403,
        { error: 'A browser navigation never writes: submit from DJ software, a script or fetch()' },
      ]);
      expect(answer(await rawRequest(`${url}/v1/reports/ppl?from=2026-10-01&to=2026-10-31`, { headers: navigate }))).toEqual([
        403,
        { error: 'A browser navigation never downloads a report: use svc report, or fetch() with the secret' },
      ]);
    });

    it('When another origin reads a public page or sends a preflight, then it passes; the listeners read is guarded like a write', async () => {
      expect((await rawRequest(`${url}/v1/last`, { headers: { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' } })).status).toBe(200);
      expect((await rawRequest(`${url}/v1/remoteinput`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } })).status).toBe(200);
      expect((await rawRequest(`${url}/v1/listeners`, { headers: { Origin: 'https://evil.example' } })).status).toBe(403);
    });
  });

  describe('securityHeaders', () => {
    it('When any answer is written, then it carries the security headers', async () => {
      const url = await serve([securityHeaders]);
      const res = await rawRequest(url);
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(res.headers[name.toLowerCase()]).toBe(value);
    });
  });
});
