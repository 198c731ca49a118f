import { gzipSync } from 'node:zlib';
import { isFormRequest, parseBody, rawRequestOf, requireObjectBody } from '../../../../src/server/middleware/body';
import { rawRequest } from '../../../helpers/raw-http';
import { serveMiddleware, type MiddlewareApp } from '../../../helpers/middleware-app';

// src/server/middleware/body.ts alone: POST and PATCH bodies (docs/decisions.md), JSON or a
// form, 413 over the limit, 415 for any other type, 400 for an encoding that does not decode.

const LIMIT = 1000;

describe('parseBody, the body middleware', () => {
  let app: MiddlewareApp;
  let objectOnly: MiddlewareApp;
  let raw: MiddlewareApp;

  beforeAll(async () => {
    app = await serveMiddleware(parseBody(LIMIT));
    objectOnly = await serveMiddleware([...parseBody(LIMIT), requireObjectBody]);
    raw = await serveMiddleware(parseBody(LIMIT), (ctx) => {
      ctx.body = rawRequestOf(ctx);
    });
  });
  afterAll(async () => {
    await Promise.all([app.close(), objectOnly.close(), raw.close()]);
  });

  const post = (url: string, body: string | Buffer, headers: Record<string, string> = {}, method = 'POST') => rawRequest(url, { method, headers, body });
  const json = (text: string): unknown => JSON.parse(text);

  it('When a JSON body is posted, then the route reads it parsed; a PATCH is read too', async () => {
    const res = await post(app.url, '{"artist":"A","title":"T"}', { 'Content-Type': 'application/json' });
    expect(res.status).toBe(200);
    expect(json(res.text)).toMatchObject({ reached: true, body: { artist: 'A', title: 'T' } });
    const patched = await post(app.url, '{"title":"U"}', { 'Content-Type': 'application/json' }, 'PATCH');
    expect(json(patched.text)).toMatchObject({ body: { title: 'U' } });
  });

  it('When the Content-Type is missing, text/plain or a +json type, then the body is read as JSON', async () => {
    const types: Record<string, string>[] = [{}, { 'Content-Type': 'text/plain' }, { 'Content-Type': 'application/vnd.svc+json' }];
    for (const headers of types) {
      const res = await post(app.url, '{"artist":"A"}', headers);
      expect([res.status, json(res.text)]).toEqual([200, expect.objectContaining({ body: { artist: 'A' } })]);
    }
  });

  it('When a form is posted, then it is read like a query string and the request is marked a form', async () => {
    const res = await post(raw.url, 'artist=A&title=T+U', { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' });
    expect(res.status).toBe(200);
    expect(json(res.text)).toMatchObject({ method: 'POST', body: { artist: 'A', title: 'T U' }, rawBody: 'artist=A&title=T+U', bodyIsForm: true });
    expect(isFormRequest('application/x-www-form-urlencoded; charset=utf-8')).toBe(true);
    expect(isFormRequest('application/json')).toBe(false);
    expect(isFormRequest('')).toBe(false);
  });

  it('When another content type is posted, then 415 and the route never runs', async () => {
    const res = await post(app.url, 'a,b', { 'Content-Type': 'text/csv' });
    expect(res.status).toBe(415);
    expect(json(res.text)).toEqual({ error: 'Unsupported content type: send application/json or application/x-www-form-urlencoded' });
  });

  it('When the declared length is over the limit, then 413 before the body is read; an undeclared one over it is 413 too', async () => {
    const declared = await post(app.url, '{}', { 'Content-Type': 'application/json', 'Content-Length': String(LIMIT + 1) });
    expect(declared.status).toBe(413);
    expect(json(declared.text)).toEqual({ error: `Request body too large (limit ${LIMIT} bytes)` });
    const chunked = await post(app.url, JSON.stringify({ title: 'x'.repeat(LIMIT) }), { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    expect(chunked.status).toBe(413);
  });

  it('When the body is not JSON, then 400 "Invalid JSON in request body"', async () => {
    const res = await post(app.url, '{"artist":', { 'Content-Type': 'application/json' });
    expect([res.status, json(res.text)]).toEqual([400, { error: 'Invalid JSON in request body' }]);
  });

  it('When the body is gzip that does not inflate, then 400; an encoding nobody knows is 415; good gzip is read', async () => {
    const broken = await post(app.url, Buffer.from('not gzip at all'), { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    expect([broken.status, json(broken.text)]).toEqual([400, { error: 'Invalid request body encoding' }]);
    const unknown = await post(app.url, '{}', { 'Content-Type': 'application/json', 'Content-Encoding': 'x-svc-unknown' });
    expect([unknown.status, json(unknown.text)]).toEqual([415, { error: 'Unsupported content encoding: x-svc-unknown' }]);
    const good = await post(app.url, gzipSync('{"artist":"Z"}'), { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    expect(json(good.text)).toMatchObject({ body: { artist: 'Z' } });
  });

  it('When the JSON has a __proto__ key, then that key is removed and the rest is read', async () => {
    const res = await post(app.url, '{"__proto__":{"polluted":true},"artist":"A"}', { 'Content-Type': 'application/json' });
    expect(res.status).toBe(200);
    const { body } = json(res.text) as { body: Record<string, unknown> };
    expect(Object.keys(body)).toEqual(['artist']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('When the request is a GET, then nothing is read or checked, and the pipeline sees no body but the credential header', async () => {
    const res = await rawRequest(`${raw.url}/?secret=s`, { headers: { 'Content-Type': 'text/csv', 'X-SVC-Client-Auth': 'k' } });
    expect(res.status).toBe(200);
    expect(json(res.text)).toEqual({ method: 'GET', query: { secret: 's' }, bodyIsForm: false, authHeader: 'k' });
  });

  it('When a route needs an object body, then an array or a number is 400 before the route runs', async () => {
    for (const body of ['[1,2]', '42', 'null']) {
      const res = await post(objectOnly.url, body, { 'Content-Type': 'application/json' });
      expect([res.status, json(res.text)]).toEqual([400, { error: 'Request body must be a JSON object' }]);
    }
    expect((await post(objectOnly.url, '{"a":1}', { 'Content-Type': 'application/json' })).status).toBe(200);
  });
});
