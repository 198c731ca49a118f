import { cors, corsPolicy } from '../../../../src/server/middleware/cors';
import { rawRequest } from '../../../helpers/raw-http';
import { serveMiddleware, type MiddlewareApp } from '../../../helpers/middleware-app';

// src/server/middleware/cors.ts alone: CORS per `corsOrigins` (docs/decisions.md), with the
// credential headers in the preflight so an overlay on another origin can read and submit.

describe('corsPolicy, the CORS headers of an Origin', () => {
  it('When every origin is allowed, then any Origin gets *, and nothing varies by Origin', () => {
    expect(corsPolicy(['*'])('https://overlay.example')).toEqual({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'ETag, X-Request-Id' });
    expect(corsPolicy(['*'])('')).toEqual({});
  });

  it('When origins are listed, then a listed one is echoed, any other gets none, and both vary by Origin', () => {
    const policy = corsPolicy(['https://overlay.example']);
    expect(policy('https://overlay.example')).toEqual({
      Vary: 'Origin',
      'Access-Control-Allow-Origin': 'https://overlay.example',
      'Access-Control-Expose-Headers': 'ETag, X-Request-Id',
    });
    expect(policy('https://evil.example')).toEqual({ Vary: 'Origin' });
    expect(corsPolicy([])('https://overlay.example')).toEqual({ Vary: 'Origin' });
  });
});

describe('cors, the CORS middleware', () => {
  let app: MiddlewareApp;

  beforeAll(async () => {
    app = await serveMiddleware([cors(corsPolicy(['https://overlay.example']))]);
  });
  afterAll(() => app.close());

  it('When a listed origin reads, then the answer carries its CORS headers and the route runs', async () => {
    const res = await rawRequest(app.url, { headers: { Origin: 'https://overlay.example' } });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://overlay.example');
    expect(res.headers['access-control-expose-headers']).toBe('ETag, X-Request-Id');
    expect(res.headers.vary).toBe('Origin');
    expect(JSON.parse(res.text)).toMatchObject({ reached: true });
  });

  it('When an origin that is not listed reads, then no Allow-Origin (the browser keeps the answer from the page)', async () => {
    const res = await rawRequest(app.url, { headers: { Origin: 'https://evil.example' } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers.vary).toBe('Origin');
  });

  it('When a browser sends a preflight, then 204 with the methods, the credential headers and a max age, and the route never runs', async () => {
    const res = await rawRequest(app.url, {
      method: 'OPTIONS',
      headers: { Origin: 'https://overlay.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-svc-client-auth' },
    });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, OPTIONS');
    expect(res.headers['access-control-allow-headers']).toBe('Content-Type, X-SVC-Client-Auth, X-WNP-Client-Auth, If-None-Match, Last-Event-ID');
    expect(res.headers['access-control-max-age']).toBe('600');
  });

  it('When an OPTIONS request is no preflight, then it goes on to the routes', async () => {
    const res = await rawRequest(app.url, { method: 'OPTIONS', headers: { Origin: 'https://overlay.example' } });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-methods']).toBeUndefined();
  });
});
