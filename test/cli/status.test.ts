import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { runCli } from '../helpers/run-cli';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { unusedPort } from './cli-process';

// `svc status` against a real server; a few stand-in servers for answers ours never gives.

describe('svc status', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  test('When the server is healthy, then it prints status and version and exits 0', async () => {
    const result = await runCli(['status', '--url', server.url]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ok {2}svc \d+\.\d+\.\d+\S* at http:\/\/127\.0\.0\.1:\d+\/\n {4}(config \S+|no config file found \(.*\))\n$/);
    expect(result.stderr).toBe('');
  });

  test('When --json is given, then it prints the /v1/status object', async () => {
    const result = await runCli(['status', '--json', '--url', server.url]);
    expect(result.code).toBe(0);
    const parsed: unknown = JSON.parse(result.stdout);
    expect(parsed).toMatchObject({ status: 'ok', version: expect.stringMatching(/^\d+\.\d+\.\d+$/), schema: { backend: 'sqlite' }, database: 'ok' });
  });

  test('When the server is unreachable, then it exits 4 and stdout stays empty, with --json too', async () => {
    const port = await unusedPort();
    for (const args of [['status'], ['status', '--json']]) {
      const result = await runCli(args, { env: { SVC_URL: `http://127.0.0.1:${port}` } });
      expect(result).toMatchObject({ code: 4, stdout: '' });
      expect(result.stderr).toContain('connection refused');
    }
  });

  test('When the port is one fetch refuses ("bad port"), then it is a usage error (exit 2), not an unreachable server', async () => {
    const result = await runCli(['status', '--url', 'http://127.0.0.1:6000']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain('port 6000');
  });

  test('When the server does not answer within --timeout, then it exits 4 and says how long it waited', async () => {
    // Accepts the connection and never answers.
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const result = await runCli(['status', '--url', `http://127.0.0.1:${port}`, '--timeout', '0.25']);
      expect(result).toMatchObject({ code: 4, stdout: '' });
      expect(result.stderr).toContain(`no answer from http://127.0.0.1:${port} within 0.25 s (see --timeout)`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  describe('Answers our server never gives (a stand-in server)', () => {
    let standIn: http.Server;
    let answer: { status: number; body: string };
    let url: string;

    beforeAll(async () => {
      standIn = http.createServer((_req, res) => res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(answer.body));
      await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => standIn.close(() => resolve()));
    });

    test('When the server answers 500, then it exits 1 and shows the error message', async () => {
      answer = { status: 500, body: '{"error":"Internal server error"}' };
      const result = await runCli(['status', '--url', url]);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toContain('server error (500): Internal server error');
    });

    test('When the server reports a status other than ok, then it prints it and exits 1', async () => {
      answer = { status: 200, body: '{"status":"degraded","version":"9.9.9"}' };
      const result = await runCli(['status', '--json', '--url', url]);
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout)).toEqual({ status: 'degraded', version: '9.9.9' });
      expect(result.stderr).toContain('degraded');
    });

    test('When the answer is not JSON, then it exits 1', async () => {
      answer = { status: 200, body: '<html>hello</html>' };
      const result = await runCli(['status', '--url', url]);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toContain('not JSON');
    });
  });
});
