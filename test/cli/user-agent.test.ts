import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { VERSION } from '../../src/version';
import { runCli } from '../helpers/run-cli';

// The User-Agent the CLI's requests carry, as a local server sees it: HTTP (fetch) and the
// WebSocket handshake (ws). The server answers like svc would, on loopback only.

describe('svc User-Agent', () => {
  let server: http.Server;
  let url: string;
  const seen: { path: string; userAgent: string | undefined }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push({ path: req.url ?? '', userAgent: req.headers['user-agent'] });
      const body = req.url === '/v1/status' ? { status: 'ok', version: '0.0.0' } : { artist: 'A', title: 'B', dbid: 1 };
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    });
    // A handshake is enough: the test only needs the request headers, then the client gives up.
    server.on('upgrade', (req, socket) => {
      seen.push({ path: req.url ?? '', userAgent: req.headers['user-agent'] });
      socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => (seen.length = 0));

  test.each([
    [['last', '--json'], '/v1/last'],
    [['submit', '--artist', 'A', '--title', 'B'], '/v1/remoteinput'],
  ])('When running %j, then the server sees User-Agent svc/<version>', async (args, path) => {
    await runCli([...args, '--url', url]);
    expect(seen.find((request) => request.path.startsWith(path))?.userAgent).toBe(`svc/${VERSION}`);
  });

  test('When following the stream, then the WebSocket handshake carries User-Agent svc/<version>', async () => {
    await runCli(['last', '--follow', '--url', url], { timeoutMs: 5000 });
    expect(seen.find((request) => request.path === '/v1/images/ws')?.userAgent).toBe(`svc/${VERSION}`);
  });
});
