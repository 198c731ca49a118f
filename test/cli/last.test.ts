import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { postJson, request } from '../helpers/http';
import { runCli } from '../helpers/run-cli';
import { makeTempDir } from '../helpers/temp-dir';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { unusedPort } from './cli-process';

// `svc last` (one-shot), spawned as the real binary against a real server.

const SECRET = 's3cret';
const ESC = '\u001b[';

describe('svc last', () => {
  let server: TestServer;
  const env = () => ({ SVC_URL: server.url });

  beforeAll(async () => {
    server = await startTestServer({ config: { secret: SECRET } });
  });
  afterAll(async () => {
    await server.close();
  });

  describe('When nothing is playing', () => {
    test('then it prints nothing and exits 6', async () => {
      const result = await runCli(['last'], { env: env() });
      expect(result).toMatchObject({ code: 6, stdout: '' });
    });

    test('then --json prints nothing either and exits 6', async () => {
      const result = await runCli(['last', '--json'], { env: env() });
      expect(result).toMatchObject({ code: 6, stdout: '' });
    });
  });

  describe('When a track is playing', () => {
    beforeAll(async () => {
      const answer = await postJson(
        `${server.url}/v1/remoteinput`,
        { artist: 'Daft Punk', title: 'One More Time', album: 'Discovery', date: '2001-03-12', bpm: 123 },
        { 'X-SVC-Client-Auth': SECRET },
      );
      expect(answer.status).toBe(200);
    });

    test('then it prints "Artist - Title (Album, Year)" and exits 0', async () => {
      const result = await runCli(['last'], { env: env() });
      expect(result).toMatchObject({ code: 0, stdout: 'Daft Punk - One More Time (Discovery, 2001)\n', stderr: '' });
    });

    test('then --json prints the /v1/last object as it is', async () => {
      const result = await runCli(['last', '--json'], { env: env() });
      expect(result.code).toBe(0);
      expect(result.stdout.endsWith('\n')).toBe(true);
      const served = await request(`${server.url}/v1/last`);
      expect(JSON.parse(result.stdout)).toEqual(served.json);
    });

    test('then --format fills {field} and {{field}} placeholders; a missing field renders empty, with its brackets and separator', async () => {
      const result = await runCli(['last', '--format', '{artist} - {{title}} [{genre}] {bpm} BPM {year} {{raw}}'], { env: env() });
      // {{raw}} is no field svc knows: the line still prints, and stderr says so (docs/first-hour.md "Templates").
      expect(result).toMatchObject({
        code: 0,
        stdout: 'Daft Punk - One More Time 123 BPM 2001\n',
        stderr: 'svc: warning: --format: {{raw}} is no field svc knows: it stays empty unless a track carries such a custom field\n',
      });
    });

    test('then a --format with an unmatched brace is a usage error (2)', async () => {
      const result = await runCli(['last', '--format', '{artist'], { env: env() });
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).toMatch(/--format: unmatched/);
    });

    test('then --format and --json together are a usage error (2)', async () => {
      const result = await runCli(['last', '--json', '--format', '{artist}'], { env: env() });
      expect(result).toMatchObject({ code: 2, stdout: '' });
    });
  });

  describe('Colour', () => {
    test('When stdout is a pipe, then there is no colour', async () => {
      const result = await runCli(['last'], { env: env() });
      expect(result.stdout).not.toContain(ESC);
    });

    test('When FORCE_COLOR is set, then the line is coloured', async () => {
      const result = await runCli(['last'], { env: { ...env(), FORCE_COLOR: '1' } });
      expect(result.stdout).toContain(ESC);
      // eslint-disable-next-line no-control-regex -- stripping ANSI colour codes
      expect(result.stdout.replace(/\u001b\[\d+m/g, '')).toBe('Daft Punk - One More Time (Discovery, 2001)\n');
    });

    test('When NO_COLOR is set, then there is no colour', async () => {
      const result = await runCli(['last'], { env: { ...env(), NO_COLOR: '1' } });
      expect(result).toMatchObject({ code: 0, stdout: 'Daft Punk - One More Time (Discovery, 2001)\n' });
    });

    // Piped stdout; docs/decisions.md "Command-line environment": empty counts as unset, NO_COLOR wins.
    test.each([
      [{ NO_COLOR: '1', FORCE_COLOR: '' }, false],
      [{ NO_COLOR: '', FORCE_COLOR: '' }, false],
      [{ NO_COLOR: '1', FORCE_COLOR: '1' }, false],
      [{ FORCE_COLOR: 'false' }, false],
      [{ FORCE_COLOR: '0' }, false],
      [{ NO_COLOR: '', FORCE_COLOR: '2' }, true],
    ])('When the environment is %j and stdout a pipe, then colour is %s', async (colourEnv, coloured) => {
      const result = await runCli(['last'], { env: { ...env(), ...colourEnv } });
      expect(result.code).toBe(0);
      expect(result.stdout.includes(ESC)).toBe(coloured);
    });

    test('When FORCE_COLOR is set with --json, then there is still no colour and the output is JSON', async () => {
      const result = await runCli(['last', '--json'], { env: { ...env(), FORCE_COLOR: '1' } });
      expect(result.stdout).not.toContain(ESC);
      expect(JSON.parse(result.stdout)).toMatchObject({ artist: 'Daft Punk' });
    });
  });

  describe('Where the server address comes from', () => {
    test('When SVC_URL is unset and --url is given, then the flag is used', async () => {
      const result = await runCli(['last', '--json', '--url', server.url]);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ title: 'One More Time' });
    });

    test('When --url and SVC_URL disagree, then the flag wins', async () => {
      const port = await unusedPort();
      const result = await runCli(['last', '--json', '--url', server.url], { env: { SVC_URL: `http://127.0.0.1:${port}` } });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ title: 'One More Time' });
    });

    test('When a config file in the working directory names client.url, then it is used', async () => {
      const temp = makeTempDir();
      try {
        fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ client: { url: server.url } }));
        const result = await runCli(['last', '--json'], { cwd: temp.dir });
        expect(result.code).toBe(0);
        expect(JSON.parse(result.stdout)).toMatchObject({ artist: 'Daft Punk' });
      } finally {
        temp.cleanup();
      }
    });

    test('When --config FILE names client.url, then that file is used', async () => {
      const temp = makeTempDir();
      try {
        const file = path.join(temp.dir, 'client.yaml');
        fs.writeFileSync(file, `client:\n  url: ${server.url}\n`);
        const result = await runCli(['last', '--json', '--config', file]);
        expect(result.code).toBe(0);
        expect(JSON.parse(result.stdout)).toMatchObject({ artist: 'Daft Punk' });
      } finally {
        temp.cleanup();
      }
    });

    test('When --config names a .conf file and SVC_URL is set but empty, then the file is used', async () => {
      const temp = makeTempDir();
      try {
        const file = path.join(temp.dir, 'my.conf');
        fs.writeFileSync(file, `client:\n  url: ${server.url}\n`);
        const result = await runCli(['last', '--json', '--config', file], { env: { SVC_URL: '', SVC_SECRET: '' } });
        expect(result).toMatchObject({ code: 0, stderr: '' });
        expect(JSON.parse(result.stdout)).toMatchObject({ artist: 'Daft Punk' });
      } finally {
        temp.cleanup();
      }
    });

    test('When the config file has a JSON syntax error, then stderr is one located line, the line and a caret (2)', async () => {
      const temp = makeTempDir();
      try {
        const file = path.join(temp.dir, '.svcrc.json');
        fs.writeFileSync(file, '{"port": 9000,}\n');
        const result = await runCli(['last'], { cwd: temp.dir });
        expect(result).toMatchObject({ code: 2, stdout: '' });
        expect(result.stderr.split('\n')).toEqual([
          expect.stringMatching(/^svc: config error: .*\.svcrc\.json:1:15: JSON: \S/),
          '  {"port": 9000,}',
          '                ^',
          '',
        ]);
      } finally {
        temp.cleanup();
      }
    });

    test('When the config file has an unknown key, then it is a config error (2)', async () => {
      const temp = makeTempDir();
      try {
        const file = path.join(temp.dir, 'bad.json');
        fs.writeFileSync(file, JSON.stringify({ client: { adress: server.url } }));
        const result = await runCli(['last', '--config', file]);
        expect(result).toMatchObject({ code: 2, stdout: '' });
        expect(result.stderr).toContain('client.adress');
      } finally {
        temp.cleanup();
      }
    });

    test('When --url is not an http URL, then it is a usage error (2)', async () => {
      const result = await runCli(['last', '--url', 'ftp://127.0.0.1/']);
      expect(result).toMatchObject({ code: 2, stdout: '' });
    });

    test('When --url carries a password, then it is refused without echoing it (2)', async () => {
      const result = await runCli(['last', '--url', `http://dj:hunter2@127.0.0.1:${new URL(server.url).port}`]);
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).not.toContain('hunter2');
    });
  });

  describe('When the server cannot be reached', () => {
    test('then it exits 4 with a note on stderr and nothing on stdout', async () => {
      const port = await unusedPort();
      const result = await runCli(['last', '--json'], { env: { SVC_URL: `http://127.0.0.1:${port}` } });
      expect(result).toMatchObject({ code: 4, stdout: '' });
      expect(result.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+: connection refused/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    });

    test('When the server accepts but never answers, then --timeout ends the wait with exit 4', async () => {
      const sockets = new Set<net.Socket>();
      const silent = net.createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = silent.address() as net.AddressInfo;
        const started = Date.now();
        const result = await runCli(['last', '--timeout', '0.5', '--url', `http://127.0.0.1:${port}`]);
        expect(result).toMatchObject({ code: 4, stdout: '' });
        expect(result.stderr).toContain('no answer from http://127.0.0.1');
        expect(result.stderr).toContain('within 0.5 s');
        expect(Date.now() - started).toBeLessThan(8000);
      } finally {
        sockets.forEach((socket) => socket.destroy());
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      }
    });

    test('When --timeout is not a positive number, then it is a usage error (2)', async () => {
      const result = await runCli(['last', '--timeout', 'soon'], { env: env() });
      expect(result).toMatchObject({ code: 2, stdout: '' });
    });
  });

  describe('When the address is some other web server', () => {
    test('then a 404 is an unexpected answer (1)', async () => {
      const other = http.createServer((_req, res) => res.writeHead(404, { 'Content-Type': 'text/html' }).end('<h1>Not Found</h1>'));
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = other.address() as net.AddressInfo;
        const result = await runCli(['last', '--url', `http://127.0.0.1:${port}`]);
        expect(result).toMatchObject({ code: 1, stdout: '' });
        expect(result.stderr).toMatch(/unexpected answer .*404/);
      } finally {
        await new Promise<void>((resolve) => other.close(() => resolve()));
      }
    });
  });

  describe('Start-up', () => {
    test('When svc last runs, then it loads neither the server stack nor ws, chalk or cosmiconfig', async () => {
      const temp = makeTempDir();
      try {
        const out = path.join(temp.dir, 'modules.txt');
        const recorder = path.join(__dirname, 'fixtures', 'record-modules.js');
        const result = await runCli(['last', '--json'], {
          cwd: temp.dir,
          env: { ...env(), NODE_OPTIONS: `--require ${recorder}`, SVC_TEST_MODULES_OUT: out },
        });
        expect(result.code).toBe(0);
        const loaded = fs.readFileSync(out, 'utf8').split('\n').filter(Boolean);
        // The recorder worked: the CLI itself is in the list.
        expect(loaded.some((file) => file.endsWith(path.join('dist', 'cli', 'main.js')))).toBe(true);
        const forbidden = [
          /[\\/]node_modules[\\/]koa[\\/]/,
          /[\\/]node_modules[\\/]@koa[\\/]/,
          /[\\/]node_modules[\\/]better-sqlite3[\\/]/,
          /[\\/]node_modules[\\/]ws[\\/]/,
          /[\\/]node_modules[\\/]chalk[\\/]/,
          /[\\/]node_modules[\\/]cosmiconfig[\\/]/,
          /[\\/]dist[\\/](server|store|pipeline|enrich|images)[\\/]/,
        ];
        expect(loaded.filter((file) => forbidden.some((pattern) => pattern.test(file)))).toEqual([]);
      } finally {
        temp.cleanup();
      }
    });
  });

  describe('Control characters in track data', () => {
    test('When a field holds a newline or a terminal escape, then the escape was never stored, the text line stays one line and --json keeps the newline', async () => {
      const other = await startTestServer();
      try {
        await postJson(`${other.url}/v1/remoteinput`, { artist: 'Evil\u001b[2J', title: 'Two\nLines' });
        const text = await runCli(['last'], { env: { SVC_URL: other.url } });
        expect(text).toMatchObject({ code: 0, stdout: 'Evil[2J - Two Lines\n' });
        const json = await runCli(['last', '--json'], { env: { SVC_URL: other.url } });
        expect(JSON.parse(json.stdout)).toMatchObject({ artist: 'Evil[2J', title: 'Two\nLines' });
      } finally {
        await other.close();
      }
    });
  });
});
