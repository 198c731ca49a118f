import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { asObject, postJson, request } from '../helpers/http';
import { runCli } from '../helpers/run-cli';
import { startServeProcess } from '../helpers/serve-process';
import { makeTempDir } from '../helpers/temp-dir';

// Every server here runs with --offline: tests never send traffic beyond loopback.

describe('svc serve', () => {
  const temp = makeTempDir();
  afterAll(() => temp.cleanup());

  it('When started, then it prints one line with its URL on stdout, serves, and exits 0 on SIGTERM', async () => {
    const serve = await startServeProcess(['--port', '0', '--db', path.join(temp.dir, 'a.db'), '--offline']);
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await request(`${serve.url}/v1/status`)).status).toBe(200);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(serve.stderr()).not.toMatch(/at .*\.js:\d+/);
  });

  it('When SIGINT arrives, then it closes the database and exits 0', async () => {
    const dbFile = path.join(temp.dir, 'b.db');
    const serve = await startServeProcess(['--port', '0', '--db', dbFile, '--offline']);
    expect((await postJson(`${serve.url}/v1/remoteinput`, { artist: 'Before', title: 'Shutdown' })).status).toBe(200);
    serve.child.kill('SIGINT');
    expect(await serve.exited).toBe(0);
    // A clean close checkpoints the WAL into the main file.
    expect(fs.existsSync(`${dbFile}-wal`) ? fs.statSync(`${dbFile}-wal`).size : 0).toBe(0);
  });

  it('When the port is in use, then one clear line and exit 1, no stack trace', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const result = await runCli(['serve', '--port', String(port), '--db', ':memory:', '--offline']);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`svc: cannot listen on 127.0.0.1:${port}: the port is already in use (choose another with --port)`);
      expect(result.stdout).toBe('');
    } finally {
      blocker.close();
    }
  });

  it('When the database path cannot be created, then one clear line and exit 1', async () => {
    const file = path.join(temp.dir, 'plain-file');
    fs.writeFileSync(file, 'not a directory');
    const result = await runCli(['serve', '--port', '0', '--db', path.join(file, 'svc.db'), '--offline']);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^svc: cannot open database .*plain-file\/svc\.db: E[A-Z]+: /);
  });

  it('When the config file has an unknown key, then exit 2 with one line naming key and file', async () => {
    const dir = path.join(temp.dir, 'bad-config');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, '.svcrc.json'), '{"prot": 1}');
    const result = await runCli(['serve'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(`svc: config error: config file ${path.join(dir, '.svcrc.json')}: unknown key "prot"`);
  });

  it('When --port is not a number, then exit 2', async () => {
    const result = await runCli(['serve', '--port', 'eighty']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/command line: invalid value for "port"/);
  });

  it('When SVC_PORT and SVC_DATABASE are set, then serve uses them; --port beats SVC_PORT', async () => {
    const dbFile = path.join(temp.dir, 'env.db');
    const serve = await startServeProcess(['--port', '0', '--offline'], { SVC_PORT: '1', SVC_DATABASE: dbFile, XDG_DATA_HOME: temp.dir });
    try {
      expect(serve.url).not.toMatch(/:1$/);
      expect((await postJson(`${serve.url}/v1/remoteinput`, { artist: 'Env' })).status).toBe(200);
      expect(fs.existsSync(dbFile)).toBe(true);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('When no database is configured, then it lives in $XDG_DATA_HOME/svc/svc.db', async () => {
    const serve = await startServeProcess(['--port', '0', '--offline'], { XDG_DATA_HOME: temp.dir });
    serve.child.kill('SIGTERM');
    await serve.exited;
    expect(fs.existsSync(path.join(temp.dir, 'svc', 'svc.db'))).toBe(true);
  });

  it('When it listens on all interfaces without a secret, then it warns on stderr', async () => {
    const serve = await startServeProcess(['--port', '0', '--host', '0.0.0.0', '--db', ':memory:', '--offline']);
    serve.child.kill('SIGTERM');
    await serve.exited;
    expect(serve.stderr()).toMatch(/warn listening on 0\.0\.0\.0 without a secret/);
  });

  it('When a secret is set on the command line, then submissions need it', async () => {
    const serve = await startServeProcess(['--port', '0', '--db', ':memory:', '--secret', 'cli-secret', '--offline']);
    try {
      expect((await postJson(`${serve.url}/v1/remoteinput`, { artist: 'A' })).status).toBe(403);
      const ok = await postJson(`${serve.url}/v1/remoteinput`, { artist: 'A' }, { 'X-SVC-Client-Auth': 'cli-secret' });
      expect(asObject(ok.json).processed_metadata).toEqual({ artist: 'A' });
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    expect(serve.stderr()).not.toContain('cli-secret');
  });

  it('When --help is asked, then usage with an example goes to stdout and exit 0', async () => {
    const result = await runCli(['serve', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Examples:\n\s+\$ svc serve/);
    expect(result.stderr).toBe('');
  });
});
