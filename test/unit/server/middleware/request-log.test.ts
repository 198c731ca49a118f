import { AppError } from '../../../../src/errors';
import { createLogger } from '../../../../src/log';
import type { AppContext } from '../../../../src/server/context';
import { handleErrors } from '../../../../src/server/middleware/errors';
import { createRequestIds, logAccess, logRequests } from '../../../../src/server/middleware/request-log';
import { rawRequest } from '../../../helpers/raw-http';
import { serveMiddleware, type MiddlewareApp } from '../../../helpers/middleware-app';

// src/server/middleware/request-log.ts alone: one log line per request (method, path with the
// secret redacted, status, milliseconds, request id), never a body or a header.

describe('createRequestIds', () => {
  it('When ids are taken, then each is new and they share this run’s random prefix', () => {
    const next = createRequestIds();
    const ids = Array.from({ length: 50 }, () => next());
    expect(new Set(ids).size).toBe(50);
    expect(ids[0]).toMatch(/^[0-9a-f]{6}-1$/);
    expect(new Set(ids.map((id) => id.split('-')[0])).size).toBe(1);
    expect(createRequestIds()()).not.toBe(ids[0]);
  });
});

describe('logAccess', () => {
  it('When a request is logged, then the line names method, path, status, milliseconds and id, with a secret redacted', () => {
    const lines: string[] = [];
    logAccess(
      createLogger((line) => lines.push(line)),
      'GET',
      '/v1/remoteinput?artist=A&secret=hunter2',
      200,
      process.hrtime.bigint(),
      'abc-1',
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ info GET \/v1\/remoteinput\?artist=A&secret=\[redacted\] 200 \d+\.\dms id=abc-1$/);
  });
});

describe('logRequests, the request log middleware', () => {
  const lines: string[] = [];
  const seen: string[] = [];
  let app: MiddlewareApp;

  beforeAll(async () => {
    const logger = createLogger((line) => lines.push(line));
    let counter = 0;
    const route = (ctx: AppContext) => {
      seen.push(ctx.state.requestId);
      if (ctx.path === '/fails') throw new AppError('INVALID_PARAMETERS', 'Bad thing');
      if (ctx.path === '/gone') ctx.state.abortedByClient = true;
      ctx.body = { ok: true };
    };
    // As createApp orders them: the log outside the error handler, so a refusal is logged with its status.
    app = await serveMiddleware([logRequests(logger, () => `id-${++counter}`), handleErrors(logger)], route);
  });
  afterAll(() => app.close());
  beforeEach(() => {
    lines.length = 0;
    seen.length = 0;
  });

  it('When a request is answered, then it gets an X-Request-Id, the route sees the same id, and one line is logged', async () => {
    const res = await rawRequest(`${app.url}/v1/last?secret=hunter2`, { headers: { 'X-SVC-Client-Auth': 'hunter2' } });
    const id = res.headers['x-request-id'];
    expect(seen).toEqual([id]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(` info GET /v1/last\\?secret=\\[redacted\\] 200 \\d+\\.\\dms id=${String(id)}$`));
    expect(lines.join('\n')).not.toContain('hunter2');
  });

  it('When the route refuses the request, then the line carries the refusal’s status', async () => {
    const res = await rawRequest(`${app.url}/fails`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"secret":"hunter2"}' });
    expect(res.status).toBe(400);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(` info POST /fails 400 \\d+\\.\\dms id=${String(res.headers['x-request-id'])}$`));
    expect(lines[0]).not.toContain('hunter2');
  });

  it('When the client went away mid-request, then no line (the error middleware reports those once a minute)', async () => {
    await rawRequest(`${app.url}/gone`);
    expect(seen).toHaveLength(1);
    expect(lines).toEqual([]);
  });
});
