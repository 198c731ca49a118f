import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../helpers/run-cli';
import { makeTempDir } from '../helpers/temp-dir';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { unusedPort } from './cli-process';

// docs/configuration.md "Where svc looks": a client command finds its config by walking up from
// the working directory, then in $XDG_CONFIG_HOME/svc/; `svc status` shows the file it used, and
// "cannot reach" names it, or says that none was found and where it looked.

describe('where the client commands find their config', () => {
  const temp = makeTempDir('svc-config-search-');
  const xdg = path.join(temp.dir, 'xdg');
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
    fs.mkdirSync(xdg);
  });
  afterAll(async () => {
    await server.close();
    temp.cleanup();
  });

  const make = (dir: string, files: Record<string, string> = {}): string => {
    fs.mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    return dir;
  };

  test('When .svcrc is two folders up, then svc status in the subfolder uses it and shows which file it used', async () => {
    const project = make(path.join(temp.dir, 'radio'), { '.svcrc': `client:\n  url: ${server.url}\n` });
    const deep = make(path.join(project, 'sets', 'friday'));
    const result = await runCli(['status'], { cwd: deep, env: { XDG_CONFIG_HOME: xdg } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`at ${server.url}/`);
    expect(result.stdout).toContain(`config ${path.join(project, '.svcrc')}`);
  });

  test('When a package.json without an svc key is nearer, then the search goes on up to the .svcrc', async () => {
    const project = make(path.join(temp.dir, 'with-package'), { '.svcrc.json': JSON.stringify({ client: { url: server.url } }) });
    const app = make(path.join(project, 'app'), { 'package.json': '{"name":"app"}' });
    const result = await runCli(['status'], { cwd: app, env: { XDG_CONFIG_HOME: xdg } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`config ${path.join(project, '.svcrc.json')}`);
  });

  test('When no folder up the tree has one, then $XDG_CONFIG_HOME/svc/ is used', async () => {
    const userConfig = make(path.join(temp.dir, 'xdg-home', 'svc'), { '.svcrc.yaml': `client:\n  url: ${server.url}\n` });
    const elsewhere = make(path.join(temp.dir, 'elsewhere'));
    const result = await runCli(['status'], { cwd: elsewhere, env: { XDG_CONFIG_HOME: path.dirname(userConfig) } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`config ${path.join(userConfig, '.svcrc.yaml')}`);
  });

  test('When the server cannot be reached and no config was found, then the error says so and where it looked', async () => {
    const empty = make(path.join(temp.dir, 'empty'));
    const port = await unusedPort();
    const result = await runCli(['status'], { cwd: empty, env: { XDG_CONFIG_HOME: xdg, SVC_URL: `http://127.0.0.1:${port}` } });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(`cannot reach http://127.0.0.1:${port}: connection refused`);
    expect(result.stderr).toContain(`no config file found (looked for .svcrc,`);
    expect(result.stderr).toContain(`in ${empty} and its parents, then in ${path.join(xdg, 'svc')})`);
  });

  test('When svc last --follow cannot open the stream, then the error names the config file too', async () => {
    const port = await unusedPort();
    const dir = make(path.join(temp.dir, 'stale-follow'), { '.svcrc': `port: ${port}\n` });
    const result = await runCli(['last', '--follow'], { cwd: dir, env: { XDG_CONFIG_HOME: xdg } });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(
      `cannot reach ws://127.0.0.1:${port}/v1/images/ws: connection refused (is \`svc serve\` running there?; config ${path.join(dir, '.svcrc')})`,
    );
  });

  test('When the server cannot be reached, then the error names the config file that gave its address', async () => {
    const port = await unusedPort();
    const dir = make(path.join(temp.dir, 'stale'), { '.svcrc': `port: ${port}\n` });
    const result = await runCli(['history'], { cwd: dir, env: { XDG_CONFIG_HOME: xdg } });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(
      `cannot reach http://127.0.0.1:${port}: connection refused (is \`svc serve\` running there?; config ${path.join(dir, '.svcrc')})`,
    );
  });
});
