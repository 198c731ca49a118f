import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFake, type FakeServer } from '../fakes/fake-server';
import { asObject, request } from '../helpers/http';
import { describeWithPeers } from '../helpers/peers';
import { makeTempDir } from '../helpers/temp-dir';

// docs/running.md "Installing without a clone": `npm pack` gives a tarball with dist/ built;
// installed into a scratch prefix it is a working `svc` whose /v1/status names the version (and no
// commit: there is no clone). The dependencies come from the npm cache where it has them, else the
// registry. better-sqlite3's install script (prebuild-install) downloads its prebuilt binary: here
// from a loopback mirror (`npm_config_better_sqlite3_binary_host`, docs/running.md) that serves the
// binary this clone's node_modules already built, in prebuild's layout (node_modules/prebuild-install/util.js:
// `<host>/v<version>/<name>-v<version>-node-v<abi>-<platform>-<arch>.tar.gz` holding
// build/Release/better_sqlite3.node), instead of compiling SQLite again (about 90 s of the suite).

const ROOT = path.join(__dirname, '..', '..');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const SQLITE_DIR = path.join(ROOT, 'node_modules', 'better-sqlite3');
const SQLITE_VERSION = (JSON.parse(fs.readFileSync(path.join(SQLITE_DIR, 'package.json'), 'utf8')) as { version: string }).version;
const PREBUILD_NAME = `better-sqlite3-v${SQLITE_VERSION}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;

/** prebuild-install keeps what it downloaded in the npm cache under a digest of the URL (node_modules/prebuild-install/util.js cachedPrebuild). */
function cachedPrebuildPath(url: string): string {
  const cache = process.env.npm_config_cache || path.join(os.homedir(), '.npm');
  const digest = crypto.createHash('sha512').update(url).digest('hex').slice(0, 6);
  return path.join(cache, '_prebuilds', `${digest}-${path.basename(url).replace(/[^a-zA-Z0-9.]+/g, '-')}`);
}

/** Runs a program to its end without blocking the event loop. */
function run(program: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { ...options, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

describeWithPeers(['g++', 'make'], 'npm pack, then npm install -g of the tarball', () => {
  jest.setTimeout(1_500_000);
  const temp = makeTempDir('svc-pack-');
  let mirror: FakeServer;
  let prebuildUrl = '';
  beforeAll(async () => {
    const tarball = spawnSync('tar', ['-czf', path.join(temp.dir, PREBUILD_NAME), '-C', SQLITE_DIR, 'build/Release/better_sqlite3.node']);
    expect(tarball.status).toBe(0);
    const body = fs.readFileSync(path.join(temp.dir, PREBUILD_NAME));
    mirror = await startFake('prebuilt binaries', (asked) =>
      asked.path === `/v${SQLITE_VERSION}/${PREBUILD_NAME}`
        ? { status: 200, headers: { 'content-type': 'application/octet-stream' }, body }
        : { status: 404, body: 'Not Found' },
    );
    prebuildUrl = `${mirror.url}/v${SQLITE_VERSION}/${PREBUILD_NAME}`;
  });
  afterAll(async () => {
    await mirror?.close();
    fs.rmSync(cachedPrebuildPath(prebuildUrl), { force: true });
    temp.cleanup();
  });

  it('When the tarball is installed into a scratch prefix, then svc serve from there answers /v1/status with the version', async () => {
    const pack = spawnSync('npm', ['pack', '--json', '--pack-destination', temp.dir], { cwd: ROOT, encoding: 'utf8', timeout: 600_000 });
    expect(pack.status).toBe(0);
    const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    expect(packed?.filename).toBe(`svc-${VERSION}.tgz`);
    const files = (packed?.files ?? []).map((file) => file.path);
    expect(files).toEqual(expect.arrayContaining(['bin/svc.js', 'dist/cli/main.js', 'dist/version.js', 'examples/systemd/svc.service', 'docs/running.md']));
    expect(files.filter((file) => file.startsWith('src/') || file.startsWith('test/'))).toEqual([]);

    const prefix = path.join(temp.dir, 'prefix');
    // Not spawnSync: the mirror answers from this process's event loop while npm runs.
    const install = await run(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        '--prefer-offline',
        '--allow-scripts=better-sqlite3',
        '--no-audit',
        '--no-fund',
        path.join(temp.dir, packed?.filename ?? ''),
      ],
      { cwd: temp.dir, env: { ...process.env, npm_config_better_sqlite3_binary_host: mirror.url } },
    );
    expect([install.status, install.stderr.split('\n').filter((line) => /ERR!|error/.test(line))]).toEqual([0, []]);
    // The binary came from the mirror, not from a build: prebuild-install asked for it once.
    expect(mirror.requests.map((asked) => asked.path)).toEqual([`/v${SQLITE_VERSION}/${PREBUILD_NAME}`]);
    expect(fs.existsSync(path.join(prefix, 'lib', 'node_modules', 'svc', 'node_modules', 'better-sqlite3', 'build', 'Release', 'obj.target'))).toBe(false);

    const child = spawn(path.join(prefix, 'bin', 'svc'), ['serve', '--port', '0', '--db', ':memory:', '--offline'], { cwd: temp.dir });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          const match = /svc listening on (\S+)/.exec(out);
          if (match?.[1]) resolve(match[1]);
        });
        child.on('exit', (code) => reject(new Error(`svc serve exited with ${String(code)} before listening`)));
      });
      const status = asObject((await request(`${url}/v1/status`)).json);
      expect(status).toMatchObject({ status: 'ok', version: VERSION, schema: { backend: 'sqlite' } });
      expect(status).not.toHaveProperty('commit');
    } finally {
      child.kill('SIGTERM');
    }
  });
});
