import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import { AppError } from '../../../../src/errors';
import { createLogger } from '../../../../src/log';
import { createApp } from '../../../../src/server/app';
import { corsPolicy } from '../../../../src/server/middleware/cors';
import type { AppState } from '../../../../src/server/context';
import { SECURITY_HEADERS } from '../../../../src/server/guards/security-headers';
import { request } from '../../../helpers/http';

describe('the error middleware', () => {
  const logs: string[] = [];
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    const router = new Router<AppState>();
    router.get('/boom', () => {
      throw new Error('database password is hunter2');
    });
    router.get('/teapot', () => {
      throw new AppError('INVALID_PARAMETERS', 'Bad thing');
    });
    router.get('/cached-then-fails', (ctx) => {
      ctx.set({ ETag: '"stale"', 'Cache-Control': 'public, max-age=600', 'Content-Disposition': 'attachment' });
      throw new AppError('INVALID_PARAMETERS', 'Failed after the headers');
    });
    router.get('/internal-app-error', () => {
      throw new AppError('INTERNAL', 'detail that must stay inside');
    });
    const app = createApp({ logger: createLogger((line) => logs.push(line)), cors: corsPolicy(['*']), routers: [router] });
    const handle = app.callback();
    server = http.createServer((request, response) => void handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('When a route throws an unexpected error, then a generic JSON 500, and the stack is logged once with the request id', async () => {
    const res = await request(`${url}/boom`);
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ error: 'Internal server error' });
    expect(res.text).not.toContain('hunter2');
    const requestId = res.headers.get('x-request-id') as string;
    const errorLines = logs.filter((line) => line.includes(' error '));
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]).toContain(`request ${requestId} failed: Error: database password is hunter2`);
  });

  it('When a route sets headers and then fails, then the error is answered on clean headers, keeping only the request id, CORS and the security headers', async () => {
    const res = await request(`${url}/cached-then-fails`, { headers: { Origin: 'http://overlay.example' } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'Failed after the headers' });
    expect(res.headers.get('etag')).toBeNull();
    expect(res.headers.get('cache-control')).toBeNull();
    expect(res.headers.get('content-disposition')).toBeNull();
    expect(res.headers.get('x-request-id')).toMatch(/\S/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(res.headers.get(name)).toBe(value);
  });

  it('When an AppError with a 5xx status carries a message, then the client still gets the generic text', async () => {
    const res = await request(`${url}/internal-app-error`);
    expect(res.json).toEqual({ error: 'Internal server error' });
  });

  it('When a 4xx AppError is thrown, then its status and message are the response and nothing is logged as an error', async () => {
    const before = logs.filter((line) => line.includes(' error ')).length;
    const res = await request(`${url}/teapot`);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'Bad thing' });
    expect(logs.filter((line) => line.includes(' error '))).toHaveLength(before);
  });
});
