import { ServiceClient, UpstreamError, retryAfterMs } from '../../src/enrich/http';
import { RateLimiter } from '../../src/enrich/rate-limit';
import { json, redirect, startFake, type FakeServer } from '../fakes/fake-server';
import { until } from '../helpers/eventually';
import { ManualLimiterClock } from '../helpers/limiter-clock';

// src/enrich/http.ts, the one outbound wrapper, against a local HTTP server.

describe('retryAfterMs', () => {
  it('When Retry-After is seconds or an HTTP date, then it becomes milliseconds; otherwise undefined', () => {
    const now = Date.parse('2024-05-04T10:00:00Z');
    expect(retryAfterMs('2', now)).toBe(2000);
    expect(retryAfterMs('Sat, 04 May 2024 10:00:03 GMT', now)).toBe(3000);
    expect(retryAfterMs('Sat, 04 May 2024 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });
});

describe('ServiceClient', () => {
  let fake: FakeServer;
  const signal = new AbortController().signal;
  const client = (options: Partial<ConstructorParameters<typeof ServiceClient>[0]> = {}) =>
    new ServiceClient({ service: 'testservice', userAgent: 'svc/9.9.9 ( test@example.org )', timeoutMs: 2000, backoffBaseMs: 50, ...options });

  beforeAll(async () => {
    fake = await startFake('testservice', (request) => {
      switch (request.path) {
        case '/ok':
          return json(200, { hello: 'world' });
        case '/missing':
          return json(404, { error: 'Not Found' });
        case '/broken':
          return json(500, { error: 'boom' });
        case '/malformed':
          return { status: 200, headers: { 'Content-Type': 'application/json' }, body: '{"truncated": ' };
        case '/slow':
          return { ...json(200, { late: true }), delayMs: 3000 };
        case '/moved':
          return redirect(307, '/elsewhere/image.jpg');
        default:
          return json(404, {});
      }
    });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  it('When a JSON answer arrives, then it is parsed and the request carried the User-Agent and Accept headers', async () => {
    expect(await client().json(`${fake.url}/ok`, { signal })).toEqual({ found: true, body: { hello: 'world' } });
    expect(fake.requests[0]?.headers['user-agent']).toBe('svc/9.9.9 ( test@example.org )');
    expect(fake.requests[0]?.headers.accept).toBe('application/json');
  });

  it('When the service answers 404, then the answer is "not found", not an error', async () => {
    expect(await client().json(`${fake.url}/missing`, { signal })).toEqual({ found: false });
  });

  it('When the service answers 500, then an UpstreamError names the service and the status, without retrying', async () => {
    const error = await client()
      .json(`${fake.url}/broken`, { signal })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ service: 'testservice', status: 500, transient: true });
    expect(String(error)).toContain('testservice: HTTP 500');
    expect(fake.requests).toHaveLength(1);
  });

  it('When the JSON is malformed, then an UpstreamError says so', async () => {
    await expect(client().json(`${fake.url}/malformed`, { signal })).rejects.toThrow('malformed JSON');
  });

  it('When the service is slower than the request timeout, then the request is abandoned with an UpstreamError', async () => {
    // The message names the 200 ms limit that fired; /slow itself would answer far later.
    await expect(client({ timeoutMs: 200 }).json(`${fake.url}/slow`, { signal })).rejects.toThrow('no answer within 200 ms');
  });

  it('When nothing listens on the port, then an UpstreamError says the request failed', async () => {
    const closed = await startFake('closed', () => json(200, {}));
    const url = closed.url;
    await closed.close();
    await expect(client().json(`${url}/ok`, { signal })).rejects.toThrow(/testservice: request failed/);
  });

  it('When the enrichment signal aborts, then the request stops at once', async () => {
    const controller = new AbortController();
    const pending = client().json(`${fake.url}/slow`, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('deadline')), 100);
    await expect(pending).rejects.toThrow('cancelled');
  });

  it('When the service answers 503 with Retry-After, then the client waits that long and tries again', async () => {
    let calls = 0;
    fake.override((request) => (request.path === '/ok' && ++calls === 1 ? json(503, { error: 'slow down' }, { 'Retry-After': '1' }) : undefined));
    // The limiter on a manual clock (test/helpers/limiter-clock.ts): the wait is proven by order.
    const clock = new ManualLimiterClock();
    const limiter = new RateLimiter(10, clock);
    const answer = client({ limiter }).json(`${fake.url}/ok`, { signal });
    // The 503 told the limiter to hold everyone for the 1 s named; the try waits for that turn.
    await until(() => clock.dueTimes().includes(1000), 'the limiter holds the next try until 1 s');
    await clock.advance(999);
    expect(fake.requests).toHaveLength(1);
    await clock.advance(1);
    expect(await answer).toEqual({ found: true, body: { hello: 'world' } });
    expect(fake.requests).toHaveLength(2);
  });

  it('When the service keeps answering 429 without Retry-After, then the client backs off and gives up after its attempts', async () => {
    fake.override(() => json(429, { error: 'too many' }));
    // The backoff (50 ms, then 100 ms) holds the limiter, here on a manual clock: proven by order.
    const clock = new ManualLimiterClock();
    const limiter = new RateLimiter(10, clock);
    const settled = client({ maxAttempts: 3, limiter })
      .json(`${fake.url}/ok`, { signal })
      .catch((caught: unknown) => caught);
    for (const [tries, backoffMs] of [
      [1, 50],
      [2, 100],
    ] as const) {
      const due = clock.now() + backoffMs;
      await until(() => fake.requests.length === tries && clock.dueTimes().includes(due), `try ${tries + 1} waits ${backoffMs} ms`);
      await clock.advance(backoffMs - 1);
      expect(fake.requests).toHaveLength(tries);
      await clock.advance(1);
    }
    expect(await settled).toMatchObject({ status: 429, transient: true });
    expect(fake.requests).toHaveLength(3);
  });

  it('When a resource redirects, then redirect() returns the absolute location without following it', async () => {
    expect(await client().redirect(`${fake.url}/moved`, { signal })).toEqual({ found: true, location: `${fake.url}/elsewhere/image.jpg` });
    expect(fake.requests.map((request) => request.path)).toEqual(['/moved']);
    expect(await client().redirect(`${fake.url}/missing`, { signal })).toEqual({ found: false });
  });

  it('When an API key is part of the path, then error messages show [key] instead', async () => {
    fake.override(() => json(500, {}));
    const error = await client({ secrets: ['s3cr3t-key'] })
      .json(`${fake.url}/api/s3cr3t-key/search.php?s=x`, { signal })
      .catch((caught: unknown) => caught);
    expect(String(error)).toContain('/api/[key]/search.php');
    expect(String(error)).not.toContain('s3cr3t-key');
  });

  it('When a form is given, then it is POSTed form-encoded', async () => {
    await client().json(`${fake.url}/ok`, { signal, form: new URLSearchParams({ client: 'k', fingerprint: 'AQAD' }) });
    expect(fake.requests[0]).toMatchObject({ method: 'POST', query: { client: 'k', fingerprint: 'AQAD' } });
  });
});
