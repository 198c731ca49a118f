import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { asObject, request } from '../helpers/http';
import { describeWithPeers } from '../helpers/peers';
import { makeTempDir } from '../helpers/temp-dir';

// docs/running.md "Installing without a clone": `npm pack` gives a tarball with dist/ built;
// installed into a scratch prefix it is a working `svc` whose /v1/status names the version (and no
// commit: there is no clone). The dependencies come from the npm cache where it has them, else the
// registry; better-sqlite3 is built with Node's installed headers (npm_config_nodedir=/usr).

const ROOT = path.join(__dirname, '..', '..');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describeWithPeers(['g++', 'make'], 'npm pack, then npm install -g of the tarball', () => {
  jest.setTimeout(1_500_000);
  const temp = makeTempDir('svc-pack-');
  afterAll(() => temp.cleanup());

  it('When the tarball is installed into a scratch prefix, then svc serve from there answers /v1/status with the version', async () => {
    const pack = spawnSync('npm', ['pack', '--json', '--pack-destination', temp.dir], { cwd: ROOT, encoding: 'utf8', timeout: 600_000 });
    expect(pack.status).toBe(0);
    const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    expect(packed?.filename).toBe(`svc-${VERSION}.tgz`);
    const files = (packed?.files ?? []).map((file) => file.path);
    expect(files).toEqual(expect.arrayContaining(['bin/svc.js', 'dist/cli/main.js', 'dist/version.js', 'examples/systemd/svc.service', 'docs/running.md']));
    expect(files.filter((file) => file.startsWith('src/') || file.startsWith('test/'))).toEqual([]);

    const prefix = path.join(temp.dir, 'prefix');
    const install = spawnSync(
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
      { cwd: temp.dir, encoding: 'utf8', timeout: 1_200_000, env: { ...process.env, npm_config_nodedir: '/usr' } },
    );
    expect([install.status, install.stderr.split('\n').filter((line) => /ERR!|error/.test(line))]).toEqual([0, []]);

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
