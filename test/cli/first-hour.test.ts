import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../helpers/postgres';
import { SVC_BIN, cleanEnv, runCli, type CliResult } from '../helpers/run-cli';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { makeTempDir } from '../helpers/temp-dir';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { unusedPort } from './cli-process';
import { until } from '../helpers/eventually';

// docs/first-hour.md: the traps a newcomer met in their first hour, each walked through with
// the real binary. Every server runs with --offline: no traffic beyond loopback.

describe('the first hour', () => {
  const temp = makeTempDir('svc-first-hour-');
  const running: ServeProcess[] = [];
  afterAll(async () => {
    for (const serve of running) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    temp.cleanup();
  });

  const folder = (name: string, files: Record<string, string>): string => {
    const dir = path.join(temp.dir, name);
    fs.mkdirSync(dir, { recursive: true });
    for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
    return dir;
  };

  const serveIn = async (cwd: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<{ serve: ServeProcess; stdout: () => string }> => {
    const serve = await startServeProcess(['--offline', ...args], env, cwd);
    running.push(serve);
    return { serve, stdout: serve.stdout };
  };

  it('When .svcrc only sets the server part (port, secret), then status and submit in that folder reach that server with its secret', async () => {
    const port = await unusedPort();
    const dir = folder('server-only', { '.svcrc': `port: ${port}\nsecret: first-hour-secret\ndatabase: ./svc.db\n` });
    await serveIn(dir);

    const status = await runCli(['status'], { cwd: dir });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`at http://127.0.0.1:${port}/`);

    const submitted = await runCli(['submit', '--artist', 'Burial', '--title', 'Archangel', '--json'], { cwd: dir });
    expect(submitted.stderr).toBe('');
    expect(submitted.code).toBe(0);
    expect(JSON.parse(submitted.stdout)).toMatchObject({ processed_metadata: { artist: 'Burial', title: 'Archangel' } });
  });

  it('When the config listens on a wildcard address, then the client dials 127.0.0.1', async () => {
    const port = await unusedPort();
    const dir = folder('wildcard', {
      '.svcrc.json': JSON.stringify({ host: '0.0.0.0', port, database: ':memory:', secret: 'lan', mdns: { advertise: false } }),
    });
    await serveIn(dir);
    const status = await runCli(['status'], { cwd: dir });
    expect([status.code, status.stdout]).toEqual([0, expect.stringContaining(`at http://127.0.0.1:${port}/`)]);
  });

  it('When svc serve starts, then it prints its URL, the three pages with a line each, the database and the config file', async () => {
    const dir = folder('banner', { '.svcrc': 'port: 0\ndatabase: ./banner.db\n' });
    const { serve, stdout } = await serveIn(dir);
    await until(() => stdout().includes('config'), 'the banner is printed');
    const lines = stdout().trimEnd().split('\n');
    const base = serve.url;
    expect(lines[0]).toBe(`svc listening on ${base}`);
    expect(lines[1]).toMatch(new RegExp(`^ {2}overlay +${base}/ +now playing, for an OBS browser source`));
    expect(lines[2]).toMatch(new RegExp(`^ {2}slideshow +${base}/slideshow +the current track's images`));
    expect(lines[3]).toMatch(new RegExp(`^ {2}history +${base}/history +the setlist`));
    expect(lines[4]).toBe(`  database   ${path.join(dir, 'banner.db')} (SQLite)`);
    expect(lines[5]).toBe('  outputs    none');
    expect(lines[6]).toBe(`  config     ${path.join(dir, '.svcrc')}`);
    expect(lines[7]).toMatch(/^ {2}version {4}\d+\.\d+\.\d+( \(commit [0-9a-f]{12}\))?, SQLite schema \d+$/);
  });

  it('When outputs are configured, then the banner lists each by name and type', async () => {
    const outputs = [
      { name: 'chat', type: 'discord', url: 'http://127.0.0.1:9/hook' },
      { name: 'stream-title', type: 'icecast', url: 'http://127.0.0.1:9', password: 'x' },
    ];
    const dir = folder('banner-outputs', { '.svcrc.json': JSON.stringify({ port: 0, database: ':memory:', outputs }) });
    const { stdout } = await serveIn(dir);
    await until(() => stdout().includes('config'), 'the banner is printed');
    expect(stdout()).toContain('  outputs    chat (discord), stream-title (icecast)\n');
  });

  it('When no config file is found, then the banner says so', async () => {
    const dir = folder('no-config', {});
    const { stdout } = await serveIn(dir, ['--port', '0', '--db', ':memory:']);
    await until(() => stdout().includes('config'), 'the banner is printed');
    expect(stdout()).toContain(`  database   :memory: (in memory, gone when svc stops)\n`);
    expect(stdout()).toMatch(/ {2}config {5}none found \(looked for \.svcrc, .* in .*no-config and its parents, then in .*svc\)\n/);
  });

  it('When database: ~/svc.db is configured, then the file is made in the home folder and no folder named ~ appears', async () => {
    const home = folder('home', {});
    const dir = folder('tilde', { '.svcrc': 'port: 0\ndatabase: ~/tilde.db\n' });
    const { stdout } = await serveIn(dir, [], { HOME: home });
    await until(() => stdout().includes('config'), 'the banner is printed');
    expect(fs.existsSync(path.join(home, 'tilde.db'))).toBe(true);
    expect(fs.existsSync(path.join(dir, '~'))).toBe(false);
    expect(stdout()).toContain(`  database   ${path.join(home, 'tilde.db')} (SQLite)`);
  });

  it('When --db=~/flag.db and --config ~/conf.yaml are given unexpanded by the shell, then both mean the home folder', async () => {
    const home = folder('home-flags', { 'conf.yaml': 'port: 0\n' });
    const dir = folder('tilde-flags', {});
    const { stdout } = await serveIn(dir, ['--db=~/flag.db', '--config', '~/conf.yaml'], { HOME: home });
    await until(() => stdout().includes('config'), 'the banner is printed');
    expect(fs.existsSync(path.join(home, 'flag.db'))).toBe(true);
    expect(stdout()).toContain(`  config     ${path.join(home, 'conf.yaml')}`);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('When the database file is read-only at start, then svc serve exits 1 naming the file and the fix, and never listens', async () => {
    const dir = folder('read-only', {});
    fs.chmodSync(temp.dir, 0o755);
    fs.chmodSync(dir, 0o777);
    const dbFile = path.join(dir, 'svc.db');
    // Made by a first run, then handed to a user who may not write it (root writes any file).
    const first = await startTestServer({ dbFile });
    await first.close();
    fs.chmodSync(dbFile, 0o444);
    // docs/running.md "When the database fails": a supervisor sees a failed start (Restart=on-failure), not a server storing nothing.
    const result = await runAsNobody(['serve', '--port', '0', '--db', dbFile, '--offline'], () =>
      Promise.reject(new Error('svc listened on a read-only database')),
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(new RegExp(`^svc: database ${dbFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} takes no writes \\(SQLITE_READONLY: `));
    expect(result.stderr).toContain('let the user svc runs as write the file');
  });
});

describeWithPostgres('svc status while PostgreSQL is cut off', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let server: TestServer;
  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    proxy = await startTcpProxy(Number(url.port || 5432), url.hostname);
    url.port = String(proxy.port);
    server = await startTestServer({ dbFile: url.toString() });
  });
  afterAll(async () => {
    await server?.close();
    await proxy?.close();
    await database?.drop();
  });

  it('When the database is reachable, then exit 0; cut off, then exit 1 and the reason on stderr', async () => {
    expect((await runCli(['status', '--url', server.url])).code).toBe(0);
    proxy.cut();
    let result: CliResult | undefined;
    const deadline = Date.now() + 10_000;
    do {
      result = await runCli(['status', '--url', server.url]);
    } while (result.code === 0 && Date.now() < deadline);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^database unavailable {2}svc /);
    expect(result.stderr).toBe('svc: the server is up but its database is unavailable: submissions fail until it is back\n');
    proxy.restore();
  });
});

/** Runs `svc` as the nobody account until it prints its URL, runs `whileUp`, then stops it. */
function runAsNobody(args: string[], whileUp: (url: string) => Promise<void>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC_BIN, ...args], { env: cleanEnv(), cwd: '/', uid: 65534, gid: 65534 });
    let stdout = '';
    let stderr = '';
    let started = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /listening on (\S+)/.exec(stdout);
      if (!match?.[1] || started) return;
      started = true;
      whileUp(match[1]).then(
        () => child.kill('SIGTERM'),
        (error: unknown) => {
          child.kill('SIGKILL');
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
