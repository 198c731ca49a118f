import fs from 'node:fs';
import path from 'node:path';
import { until } from '../helpers/eventually';
import { rawRequest } from '../helpers/raw-http';
import { runCli } from '../helpers/run-cli';
import { startServeProcess, stopServeProcess } from '../helpers/serve-process';
import { makeTempDir } from '../helpers/temp-dir';
import { unusedPort } from './cli-process';

// The tunnel recipes of docs/chat-bots-and-obs.md ("Through a tunnel") and docs/running.md
// ("Tunnels and public names"), run as written: the secret comes first, and without it svc serve
// refuses to start (docs/security.md "A public name needs the secret"). The tunnel itself is the
// Host header it passes on; every request goes to 127.0.0.1.

const ROOT = path.join(__dirname, '..', '..');

/** The first ```yaml block after `marker` in a doc. */
function yamlAfter(doc: string, marker: string): string {
  const text = fs.readFileSync(path.join(ROOT, 'docs', doc), 'utf8');
  const start = text.indexOf(marker);
  expect(start).toBeGreaterThan(-1);
  const block = /```yaml\n([\s\S]*?)```/.exec(text.slice(start));
  expect(block).not.toBeNull();
  return block?.[1] ?? '';
}

const RECIPES = [
  ['chat-bots-and-obs.md', '**Through a tunnel.**'],
  ['running.md', '## Tunnels and public names'],
] as const;

describe.each(RECIPES)('the tunnel recipe of docs/%s', (doc, marker) => {
  const temp = makeTempDir('svc-tunnel-');
  afterAll(() => temp.cleanup());
  const recipe = yamlAfter(doc, marker);

  it('starts with the secret, then the name', () => {
    expect(recipe.split('\n').findIndex((line) => line.startsWith('secret:'))).toBeLessThan(
      recipe.split('\n').findIndex((line) => line.startsWith('allowedHosts:')),
    );
  });

  it('When the config is the recipe, then the bot reads through the tunnel, a stranger cannot write, and the DJ can', async () => {
    const dir = fs.mkdtempSync(path.join(temp.dir, 'as-written-'));
    fs.writeFileSync(path.join(dir, '.svcrc'), recipe);
    const env = { SVC_PORT: String(await unusedPort()) };
    const serve = await startServeProcess(['--db', ':memory:', '--offline'], env, dir);
    try {
      const tunnel = { Host: 'np.example.net' };
      const spam = JSON.stringify({ artist: 'Spam', title: 'On your overlay' });
      const stranger = await rawRequest(`${serve.url}/v1/remoteinput`, {
        method: 'POST',
        headers: { ...tunnel, 'Content-Type': 'application/json' },
        body: spam,
      });
      expect(stranger.status).toBe(403);
      const submitted = await runCli(['submit', '--artist', 'Daft Punk', '--title', 'One More Time'], { cwd: dir, env });
      expect(submitted.stderr).toBe('');
      expect(submitted.code).toBe(0);
      const bot = await rawRequest(`${serve.url}/v1/last.txt`, { headers: tunnel });
      expect(bot.status).toBe(200);
      expect(bot.text).toBe('Daft Punk - One More Time');
    } finally {
      await stopServeProcess(serve);
    }
  });

  it('When the secret line is left out, then svc serve refuses to start, names allowedHosts and the one-line fix', async () => {
    const dir = fs.mkdtempSync(path.join(temp.dir, 'no-secret-'));
    fs.writeFileSync(path.join(dir, '.svcrc'), recipe.replace(/^secret:.*\n/m, ''));
    const result = await runCli(['serve', '--port', '0', '--db', ':memory:', '--offline'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^svc: config error: allowedHosts np\.example\.net without a secret: anyone who reaches svc/);
    expect(result.stderr).toContain('or add `openWrites: true` to the config');
  });
});

describe('a public name without a secret', () => {
  const temp = makeTempDir('svc-open-writes-');
  afterAll(() => temp.cleanup());

  it.each([
    ['a wildcard host', ['--host', '0.0.0.0'], /config error: host 0\.0\.0\.0 without a secret/],
    ['a trusted proxy', ['--config', 'proxy.yaml'], /config error: trustProxy 127\.0\.0\.1 without a secret/],
  ])('When svc serve gets %s and no secret, then it refuses to start (exit 2)', async (_name, args, expected) => {
    fs.writeFileSync(path.join(temp.dir, 'proxy.yaml'), 'trustProxy: [127.0.0.1]\n');
    const result = await runCli(['serve', '--port', '0', '--db', ':memory:', '--offline', ...args], { cwd: temp.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(expected);
  });

  it('When the config says openWrites: true, then it starts, warns, and takes writes without a secret', async () => {
    fs.writeFileSync(path.join(temp.dir, 'open.yaml'), 'allowedHosts: [party.local]\nopenWrites: true\n');
    const serve = await startServeProcess(['--port', '0', '--db', ':memory:', '--offline', '--config', 'open.yaml'], {}, temp.dir);
    try {
      await until(() => /warn allowedHosts party\.local without a secret \(openWrites: true\)/.test(serve.stderr()), 'the warning');
      const body = JSON.stringify({ artist: 'Guest', title: 'Phone' });
      const write = await rawRequest(`${serve.url}/v1/remoteinput`, {
        method: 'POST',
        headers: { Host: 'party.local', 'Content-Type': 'application/json' },
        body,
      });
      expect(write.status).toBe(200);
    } finally {
      await stopServeProcess(serve);
    }
  });
});

describe('the instances behind a proxy of docs/several-instances.md', () => {
  const temp = makeTempDir('svc-instances-recipe-');
  afterAll(() => temp.cleanup());

  it("When svc.json is the page's and SVC_SECRET is exported as the page says, then an instance starts; without it, it refuses", async () => {
    const text = fs.readFileSync(path.join(ROOT, 'docs', 'several-instances.md'), 'utf8');
    const json = /```json\n(\{ "trustProxy"[^\n]*\})\n```/.exec(text)?.[1];
    expect(json).toBeDefined();
    expect(text).toContain('export SVC_SECRET="$(cat ~/.svc-secret)"');
    fs.writeFileSync(path.join(temp.dir, 'svc.json'), json ?? '');
    const args = ['--config', 'svc.json', '--port', '0', '--db', ':memory:', '--offline'];
    const refused = await runCli(['serve', ...args], { cwd: temp.dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('trustProxy 127.0.0.1 without a secret');
    const serve = await startServeProcess(args, { SVC_SECRET: 'instances-secret' }, temp.dir);
    await stopServeProcess(serve);
  });
});

describe('allowedHosts patterns', () => {
  const temp = makeTempDir('svc-allowed-patterns-');
  afterAll(() => temp.cleanup());

  it('When allowedHosts has *.trycloudflare.com, then a quick tunnel name one label under it is answered, deeper names and the domain itself are not', async () => {
    fs.writeFileSync(path.join(temp.dir, 'quick.yaml'), 'secret: "quick-tunnel-secret"\nallowedHosts: ["*.trycloudflare.com"]\n');
    const serve = await startServeProcess(['--port', '0', '--db', ':memory:', '--offline', '--config', 'quick.yaml'], {}, temp.dir);
    try {
      const status = async (host: string) => (await rawRequest(`${serve.url}/v1/last.txt`, { headers: { Host: host } })).status;
      expect(await status('random-words-here.trycloudflare.com')).toBe(200);
      expect(await status('Random-Words.TryCloudflare.com:443')).toBe(200);
      expect(await status('a.b.trycloudflare.com')).toBe(421);
      expect(await status('trycloudflare.com')).toBe(421);
      expect(await status('eviltrycloudflare.com')).toBe(421);
    } finally {
      await stopServeProcess(serve);
    }
  });

  it.each(['np*.example.net', '*', '*.*.example.net', 'np.example.net:8443', 'https://np.example.net'])(
    'When allowedHosts has %s, then start-up stops naming the entry and what is taken',
    async (entry) => {
      fs.writeFileSync(path.join(temp.dir, 'pattern.json'), JSON.stringify({ secret: 's3cret', allowedHosts: [entry] }));
      const result = await runCli(['serve', '--port', '0', '--db', ':memory:', '--offline', '--config', 'pattern.json'], { cwd: temp.dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('invalid value for "allowedHosts[0]": must be a host name such as np.example.net, or *.example.net');
    },
  );
});
