import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { asObject, postJson, request } from '../helpers/http';
import { SVC_BIN, cleanEnv, runCli, type CliResult } from '../helpers/run-cli';
import { openDatabase } from '../../src/store/sqlite/database';
import { MIGRATIONS } from '../../src/store/sqlite/migrations';
import { unusedPort } from './cli-process';
import { until } from '../helpers/eventually';
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
      expect(result.stderr.trim()).toBe(
        `svc: cannot listen on 127.0.0.1:${port}: the port is already in use (is svc already running? \`svc status --url http://127.0.0.1:${port}\` says; else choose another port with --port)`,
      );
      expect(result.stdout).toBe('');
    } finally {
      blocker.close();
    }
  });

  it('When the port is held by a running svc, then the command the message suggests asks that svc, not the default port', async () => {
    const running = await startServeProcess(['--port', '0', '--db', ':memory:', '--offline']);
    try {
      const port = new URL(running.url).port;
      const refused = await runCli(['serve', '--port', port, '--db', ':memory:', '--offline']);
      expect(refused.code).toBe(1);
      const suggested = /`svc (status --url \S+)`/.exec(refused.stderr)?.[1];
      expect(suggested).toBe(`status --url http://127.0.0.1:${port}`);
      const status = await runCli((suggested ?? '').split(' '));
      expect(status.code).toBe(0);
      expect(status.stdout).toContain(`127.0.0.1:${port}`);
    } finally {
      running.child.kill('SIGTERM');
      await running.exited;
    }
  });

  it('When the database file has an older schema, then start-up upgrades it and logs the versions once', async () => {
    const dbFile = path.join(temp.dir, 'older.db');
    const latest = MIGRATIONS.at(-1)?.version ?? 0;
    openDatabase(dbFile, MIGRATIONS.slice(0, -1)).close();
    const first = await startServeProcess(['--port', '0', '--db', dbFile, '--offline']);
    await until(() => first.stderr().includes('schema'), 'the upgrade is logged');
    const previous = MIGRATIONS.at(-2)?.version ?? 0;
    expect(first.stderr()).toMatch(new RegExp(`info database schema upgraded from version ${previous} to ${latest}\n`));
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const again = await startServeProcess(['--port', '0', '--db', dbFile, '--offline']);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    expect(again.stderr()).not.toContain('schema');
  });

  it('When PostgreSQL refuses the connection, then one line says nothing accepts connections there, not a bare ECONNREFUSED', async () => {
    const port = await unusedPort();
    const result = await runCli(['serve', '--port', '0', '--db', `postgres://svc@127.0.0.1:${port}/radio`, '--offline'], { timeoutMs: 15_000 });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr.trim()).toBe(
      `svc: cannot use database postgres://svc@127.0.0.1:${port}/radio: nothing accepts connections there (is PostgreSQL running, and on that port?) (ECONNREFUSED)`,
    );
  });

  describe('an impossible database path fails at once with one clear line and exit 1', () => {
    // The old code looped forever on /proc (Node's recursive mkdir) and ignored SIGTERM: runCli's
    // kill after timeoutMs would show up as a signal instead of an exit code.
    const failFast = async (dbPath: string, options: { uid?: number; gid?: number } = {}) => {
      // runCli's kill after 5 s would show as a signal: exit 1 with no signal is the fast failure.
      const result =
        options.uid === undefined
          ? await runCli(['serve', '--port', '0', '--db', dbPath, '--offline'], { timeoutMs: 5000 })
          : await runAs(options, ['serve', '--port', '0', '--db', dbPath, '--offline']);
      expect(result).toMatchObject({ code: 1, signal: null, stdout: '' });
      expect(result.stderr.split('\n')).toHaveLength(2);
      return result.stderr.trim();
    };

    it('When the path is under /proc, then it names the directory it cannot create', async () => {
      expect(await failFast('/proc/nope/svc.db')).toMatch(
        /^svc: cannot open database \/proc\/nope\/svc\.db: cannot create directory \/proc\/nope: no such file or directory/,
      );
    });

    it('When the path is under a plain file, then it says that file is not a directory', async () => {
      const file = path.join(temp.dir, 'plain-file');
      fs.writeFileSync(file, 'not a directory');
      expect(await failFast(path.join(file, 'deeper', 'svc.db'))).toBe(
        `svc: cannot open database ${path.join(file, 'deeper', 'svc.db')}: ${file} is not a directory`,
      );
    });

    it('When the path is a directory, then it asks for a file name', async () => {
      expect(await failFast(temp.dir)).toMatch(/: .* is a directory; give a file name/);
    });

    describe('permissions (as an unprivileged user: root may write anywhere)', () => {
      const asRoot = process.getuid?.() === 0;
      const user = asRoot ? { uid: 65534, gid: 65534 } : {};
      let open: { dir: string; cleanup: () => void };
      let locked: string;
      beforeAll(() => {
        open = makeTempDir();
        fs.chmodSync(open.dir, 0o755);
        locked = path.join(open.dir, 'locked');
        fs.mkdirSync(locked, { mode: 0o555 });
        fs.chmodSync(locked, 0o555);
      });
      afterAll(() => open.cleanup());

      it('When a directory cannot be created for lack of permission, then it says so', async () => {
        const message = await failFast(path.join(locked, 'sub', 'svc.db'), user);
        expect(message).toBe(
          `svc: cannot open database ${path.join(locked, 'sub', 'svc.db')}: cannot create directory ${path.join(locked, 'sub')}: permission denied (check its owner and mode, or choose another --db)`,
        );
      });

      it('When the directory exists but is not writable, then it says so', async () => {
        const message = await failFast(path.join(locked, 'svc.db'), user);
        expect(message).toBe(
          `svc: cannot open database ${path.join(locked, 'svc.db')}: cannot write in directory ${locked}: permission denied (check its owner and mode, or choose another --db)`,
        );
      });
    });
  });

  it('When the config file has an unknown key, then exit 2 with one line naming key and file', async () => {
    const dir = path.join(temp.dir, 'bad-config');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, '.svcrc.json'), '{"prot": 1}');
    const result = await runCli(['serve'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(`svc: config error: config file ${path.join(dir, '.svcrc.json')}: unknown key "prot" (did you mean "port"?)`);
  });

  it('When --config names the shipped .svcrc.example, as its header says to, then serve starts with it', async () => {
    const example = path.join(__dirname, '..', '..', '.svcrc.example');
    const serve = await startServeProcess(['--config', example, '--port', '0', '--db', path.join(temp.dir, 'example.db'), '--offline']);
    expect((await request(`${serve.url}/v1/status`)).status).toBe(200);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
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

  it('When it would listen on all interfaces without a secret, then it refuses to start and says how to set one (docs/security.md)', async () => {
    const result = await runCli(['serve', '--port', '0', '--host', '0.0.0.0', '--db', ':memory:', '--offline']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^svc: config error: host 0\.0\.0\.0 without a secret: .*--secret or SVC_SECRET.*openWrites: true/);
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

/** Runs svc as another user (the test runs as root in CI containers), killed after 5 s. */
function runAs(user: { uid?: number; gid?: number }, args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC_BIN, ...args], { env: cleanEnv(), cwd: '/', ...user });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
