import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../../../src/log';
import { createEventsFastPath } from '../../../../src/server/fast-paths/events-fast-path';
import type { EventStream } from '../../../../src/server/streams/sse/event-stream';
import { rawRequest } from '../../../helpers/raw-http';

// Which requests the /v1/events fast path takes and which it leaves to the Koa route
// (test/integration/screens/events-fast-path.test.ts holds the answers of both to each other).

describe('the /v1/events fast path', () => {
  let server: http.Server;
  let url = '';
  const opened: (number | undefined)[] = [];
  const stream: EventStream = {
    open: (since) => {
      opened.push(since);
      return Promise.resolve((response) => response.end('retry: 3000\n\n'));
    },
    readerCount: () => 0,
    announce: () => undefined,
    unsentBytes: () => 0,
    waitingReaders: () => 0,
    close: () => undefined,
  };

  beforeAll(async () => {
    const answerEvents = createEventsFastPath({
      stream,
      cors: () => ({}),
      logger: createLogger(() => undefined),
      nextRequestId: () => 'req-1',
      trustedProxy: () => false,
      hostAllowed: (host) => host === undefined || host.startsWith('127.0.0.1'),
    });
    server = http.createServer((request, response) => {
      if (answerEvents(request, response)) return;
      // What Koa would have answered: here a mark that the fast path declined.
      response.writeHead(299).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('When a plain GET or HEAD names at most since (or Last-Event-ID), then the fast path answers it', async () => {
    opened.length = 0;
    const taken: [string, string, Record<string, string>, number][] = [
      ['GET', '/v1/events', {}, 200],
      ['HEAD', '/v1/events', {}, 200],
      ['GET', '/v1/events?', {}, 200],
      ['GET', '/v1/events?since=12', {}, 200],
      ['GET', '/v1/events?%73ince=13', {}, 200],
      ['GET', '/v1/events', { 'Last-Event-ID': '14' }, 200],
      ['GET', '/v1/events?since=x', {}, 400],
      ['HEAD', '/v1/events?since=x', {}, 400],
    ];
    for (const [method, path, headers, status] of taken) {
      const res = await rawRequest(`${url}${path}`, { method, headers });
      expect([method, path, res.status]).toEqual([method, path, status]);
      expect(res.headers['x-request-id']).toBe('req-1');
    }
    expect(opened).toEqual([undefined, undefined, 12, 13, 14]);
  });

  it('When the request is anything else, then the fast path leaves it to Koa untouched', async () => {
    const declined: [string, string, Record<string, string>][] = [
      ['POST', '/v1/events', {}],
      ['OPTIONS', '/v1/events', {}],
      ['GET', '/v1/events/', {}],
      ['GET', '/V1/events', {}],
      ['GET', '/v1/eventsx', {}],
      ['GET', '/v1/events?since=1&since=2', {}],
      ['GET', '/v1/events?since=1&other=2', {}],
      ['GET', '/v1/events?secret=s', {}],
      ['GET', '/v1/events', { 'X-SVC-Client-Auth': 's' }],
      ['GET', '/v1/events', { 'X-WNP-Client-Auth': 's' }],
      ['GET', '/v1/events', { Host: 'rebind.example' }],
    ];
    for (const [method, path, headers] of declined) {
      const res = await rawRequest(`${url}${path}`, { method, headers });
      expect([method, path, headers, res.status]).toEqual([method, path, headers, 299]);
      expect(res.headers['x-request-id']).toBeUndefined();
    }
  });
});
