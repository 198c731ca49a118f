import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../../../src/log';
import { createLastFastPath } from '../../../../src/server/fast-paths/last-fast-path';
import { NowPlaying } from '../../../../src/domain/current-track';

describe('the /v1/last fast path', () => {
  it('When building the answer throws, then it answers its own JSON 500 and logs the cause with the request id', async () => {
    const nowPlaying = new NowPlaying(null);
    jest.spyOn(nowPlaying, 'snapshot').mockImplementation(() => {
      throw new Error('snapshot exploded');
    });
    const lines: string[] = [];
    const answerLast = createLastFastPath({ nowPlaying, cors: () => ({}), logger: createLogger((line) => lines.push(line)), nextRequestId: () => 'req-7' });
    let fellThrough = false;
    const server = http.createServer((request, response) => {
      if (answerLast(request, response)) return;
      fellThrough = true;
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/v1/last`);
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('x-request-id')).toBe('req-7');
      expect(await res.json()).toEqual({ error: 'Internal server error' });
      expect(fellThrough).toBe(false);
      const logged = lines.join('\n');
      expect(logged).toMatch(/req-7.*snapshot exploded|snapshot exploded[\s\S]*req-7/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
