import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import { AuthThrottle } from '../../../../src/domain/auth-throttle';
import { createLogger } from '../../../../src/log';
import { createApp } from '../../../../src/server/app';
import type { AppState } from '../../../../src/server/context';
import { throttleFailedAuthentication } from '../../../../src/server/middleware/auth-throttle';
import { parseBody } from '../../../../src/server/middleware/body';
import { corsPolicy } from '../../../../src/server/middleware/cors';
import { requireSecret } from '../../../../src/server/middleware/require-secret';
import { postJson, request } from '../../../helpers/http';

describe('requireSecret, the route-level secret check', () => {
  const SECRET = 's3cret';
  const reached: string[] = [];
  const throttle = new AuthThrottle({ now: () => 0, firstDelayMs: 0 });
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    const router = new Router<AppState>();
    const done = (name: string) => (ctx: { body: unknown }) => {
      reached.push(name);
      ctx.body = { ok: name };
    };
    router.get('/open', done('open'));
    router.get('/plain', requireSecret(SECRET), done('plain'));
    router.post('/body', ...parseBody(10_000), requireSecret(SECRET, { body: true }), done('body'));
    router.post('/no-body', ...parseBody(10_000), requireSecret(SECRET), done('no-body'));
    router.get('/bearer', requireSecret(SECRET, { bearer: true }), done('bearer'));
    router.get('/unset-open', requireSecret(''), done('unset-open'));
    router.get('/unset-closed', requireSecret('', { unsetMessage: 'This needs a secret, and the server has none' }), done('unset-closed'));
    // The failure budget in front, as svc serve builds it (server/start.ts); no delay, so nobody waits.
    const authThrottle = throttleFailedAuthentication(SECRET, throttle, () => undefined);
    const app = createApp({ logger: createLogger(() => undefined), cors: corsPolicy(['*']), authThrottle, routers: [router] });
    const handle = app.callback();
    server = http.createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    reached.length = 0;
  });

  it('When no credential is given, then 403 "Missing secret in request" and the handler never runs', async () => {
    const res = await request(`${url}/plain`);
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: 'Missing secret in request' });
    expect(reached).toEqual([]);
    expect((await request(`${url}/open`)).status).toBe(200);
  });

  it('When the secret comes in X-SVC-Client-Auth, X-WNP-Client-Auth or ?secret=, then the handler runs', async () => {
    expect((await request(`${url}/plain`, { headers: { 'X-SVC-Client-Auth': SECRET } })).status).toBe(200);
    expect((await request(`${url}/plain`, { headers: { 'X-WNP-Client-Auth': SECRET } })).status).toBe(200);
    expect((await request(`${url}/plain?secret=${SECRET}`)).status).toBe(200);
    expect(reached).toEqual(['plain', 'plain', 'plain']);
  });

  it('When the header is wrong, then it decides alone (a right ?secret= does not help): 403 "Invalid secret"', async () => {
    const res = await request(`${url}/plain?secret=${SECRET}`, { headers: { 'X-SVC-Client-Auth': 'nope' } });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: 'Invalid secret' });
    expect(reached).toEqual([]);
  });

  it('When the body carries `secret`, then only a route declared with body reads it', async () => {
    expect((await postJson(`${url}/body`, { secret: SECRET })).status).toBe(200);
    const ignored = await postJson(`${url}/no-body`, { secret: SECRET });
    expect(ignored.status).toBe(403);
    expect(ignored.json).toEqual({ error: 'Missing secret in request' });
    expect((await postJson(`${url}/body`, { secret: 42 })).json).toEqual({ error: 'Invalid secret' });
    expect(reached).toEqual(['body']);
  });

  it('When a route takes a Bearer token, then Authorization: Bearer is a carrier and the query is not', async () => {
    expect((await request(`${url}/bearer`, { headers: { Authorization: `Bearer ${SECRET}` } })).status).toBe(200);
    expect((await request(`${url}/bearer`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(403);
    expect((await request(`${url}/bearer?secret=${SECRET}`)).json).toEqual({ error: 'Missing secret in request' });
    expect((await request(`${url}/plain`, { headers: { Authorization: `Bearer ${SECRET}` } })).status).toBe(403);
    expect(reached).toEqual(['bearer']);
  });

  it('When the server has no secret, then the route is open, unless it is declared to refuse with its own message', async () => {
    expect((await request(`${url}/unset-open`)).status).toBe(200);
    const closed = await request(`${url}/unset-closed?secret=anything`);
    expect(closed.status).toBe(403);
    expect(closed.json).toEqual({ error: 'This needs a secret, and the server has none' });
    expect(reached).toEqual(['unset-open']);
  });

  it('When a secret is wrong, then the failure budget counts it, and a right one clears it', async () => {
    const before = throttle.failureCount('127.0.0.1');
    await request(`${url}/plain?secret=wrong`);
    expect(throttle.failureCount('127.0.0.1')).toBe(before + 1);
    await request(`${url}/plain?secret=wrong`);
    expect(throttle.failureCount('127.0.0.1')).toBe(before + 2);
    expect((await request(`${url}/plain?secret=${SECRET}`)).status).toBe(200);
    expect(throttle.failureCount('127.0.0.1')).toBe(0);
  });
});
