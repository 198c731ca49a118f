import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { unusedPort } from '../cli/cli-process';
import { eventually } from '../helpers/eventually';
import { request } from '../helpers/http';
import { NGINX } from '../helpers/nginx';
import { describeWithPeers } from '../helpers/peers';
import { makeTempDir } from '../helpers/temp-dir';
import { startTestServer, type TestServer } from '../helpers/test-server';

// docs/several-instances.md: the nginx example started exactly as the page says, each line of its
// `sh` block run by bash in order, in a copy of examples/nginx as a user would make it. Only the
// ports change (nginx's own, and the three instances', all pointed at one test server), so that
// runs never collide; the home folder is a fresh one.

const ROOT = path.join(__dirname, '../..');
const DOC = fs.readFileSync(path.join(ROOT, 'docs/several-instances.md'), 'utf8');

/** The sh block that starts the example: the one that copies examples/nginx. */
function documentedCommands(): string[] {
  const block = [...DOC.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '').find((text) => text.includes('cp -r examples/nginx'));
  if (!block) throw new Error('docs/several-instances.md has no sh block that copies examples/nginx');
  return block.split('\n').filter((line) => line.trim() !== '');
}

describeWithPeers(['nginx'], 'the nginx example, started as docs/several-instances.md writes it', () => {
  jest.setTimeout(60_000);
  let server: TestServer;
  let port = 0;
  const home = makeTempDir('svc-nginx-home-');
  const work = makeTempDir('svc-nginx-clone-');

  beforeAll(async () => {
    server = await startTestServer();
    // The clone the user runs the commands in: its examples/nginx with this run's ports.
    port = await unusedPort();
    const backend = new URL(server.url).host;
    const config = fs
      .readFileSync(path.join(ROOT, 'examples/nginx/nginx.conf'), 'utf8')
      .replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`)
      .replace(/127\.0\.0\.1:890[123]/g, backend);
    fs.mkdirSync(path.join(work.dir, 'examples/nginx'), { recursive: true });
    fs.writeFileSync(path.join(work.dir, 'examples/nginx/nginx.conf'), config);
  });
  afterAll(async () => {
    // Whatever happened above, no nginx is left running.
    const pidFile = path.join(home.dir, 'svc-nginx', 'nginx.pid');
    if (fs.existsSync(pidFile)) process.kill(Number(fs.readFileSync(pidFile, 'utf8').trim()), 'SIGQUIT');
    await server.close();
    home.cleanup();
    work.cleanup();
  });

  it('When the commands run in order, then nginx starts with no folder made by hand, answers /v1/status from svc, and stops', async () => {
    const commands = documentedCommands();
    expect(commands).toEqual([
      'cp -r examples/nginx ~/svc-nginx && cd ~/svc-nginx',
      'nginx -p "$PWD" -e error.log -c nginx.conf',
      'curl -s http://127.0.0.1:8080/v1/status',
      'nginx -p "$PWD" -e error.log -c nginx.conf -s quit',
    ]);
    // One shell, as a user types them; curl is replaced by the test's own check below.
    const script = commands
      .filter((line) => !line.startsWith('curl '))
      .slice(0, 2)
      .join('\n');
    const env = { ...process.env, HOME: home.dir, PATH: `${path.dirname(NGINX ?? '/usr/sbin/nginx')}:${process.env.PATH ?? ''}` };
    execFileSync('bash', ['-euc', script], { cwd: work.dir, env, encoding: 'utf8' });
    const status = await eventually(
      () => request(`http://127.0.0.1:${port}/v1/status`).catch(() => ({ status: 0, json: undefined })),
      (answer) => answer.status === 200,
      10_000,
    );
    expect(status.status).toBe(200);
    expect(status.json).toMatchObject({ status: 'ok' });
    const stop = commands.at(-1) ?? '';
    execFileSync('bash', ['-euc', stop], { cwd: path.join(home.dir, 'svc-nginx'), env, encoding: 'utf8' });
    await eventually(
      async () => fs.existsSync(path.join(home.dir, 'svc-nginx', 'nginx.pid')),
      (running) => !running,
      10_000,
    );
    expect(fs.existsSync(path.join(home.dir, 'svc-nginx', 'nginx.pid'))).toBe(false);
    expect(fs.existsSync(path.join(home.dir, 'svc-nginx', 'temp-body'))).toBe(true);
  });
});
