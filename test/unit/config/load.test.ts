import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultDatabasePath } from '../../../src/config/defaults';
import { loadConfig } from '../../../src/config/load';
import { ConfigError, StartupError } from '../../../src/errors';
import { makeTempDir } from '../../helpers/temp-dir';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const fixtures = path.join(__dirname, '..', '..', 'fixtures', 'config');
const dir = (name: string) => path.join(fixtures, name);

const madeDirs: { cleanup: () => void }[] = [];
afterAll(() => madeDirs.forEach((made) => made.cleanup()));
/** A temporary working directory holding these files. */
function makeConfigDir(files: Record<string, string>): string {
  const made = makeTempDir('svc-config-');
  madeDirs.push(made);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(made.dir, name), text);
  return made.dir;
}

async function failure(run: Promise<unknown>): Promise<StartupError> {
  try {
    await run;
  } catch (error) {
    if (error instanceof StartupError) return error;
    throw error;
  }
  throw new Error('expected loadConfig to fail');
}

describe('loadConfig', () => {
  it('When no config file exists, then the embedded defaults apply', async () => {
    const { config, filepath } = await loadConfig({ cwd: dir('empty-dir'), env: { HOME: '/home/dj' } });
    expect(filepath).toBeNull();
    expect(config.port).toBe(8899);
    expect(config.host).toBe('127.0.0.1');
    expect(config.secret).toBe('');
    expect(config.processingTimeoutSeconds).toBe(30);
    expect(config.maxFieldLength).toBe(1000);
    expect(config.maxBodyBytes).toBe(1048576);
    expect(config.corsOrigins).toEqual(['*']);
    expect(config.enrichment.theaudiodb.apiKey).toBe('123');
    expect(config.enrichment.fanarttv.enabled).toBe(false);
    // Unset: the client derives it from port and host (config/client-target.ts).
    expect(config.client.url).toBe('');
    expect(Object.isFrozen(config.enrichment)).toBe(true);
  });

  it.each([
    ['svcrc-yaml', '.svcrc.yaml', 9001],
    ['svcrc-json', '.svcrc.json', 9002],
    ['svcrc-js', '.svcrc.js', 9003],
    ['svc-config-js', 'svc.config.js', 9004],
    ['package-json', 'package.json', 9005],
  ])('When the working directory has %s, then it is found and read', async (fixture, file, port) => {
    const { config, filepath } = await loadConfig({ cwd: dir(fixture), env: {} });
    expect(filepath).toBe(path.join(dir(fixture), file));
    expect(config.port).toBe(port);
  });

  it('When the working directory has a package.json without an svc key, then the defaults apply', async () => {
    const { config, filepath } = await loadConfig({ cwd: dir('package-json-without-svc'), env: {} });
    expect(filepath).toBeNull();
    expect(config.port).toBe(8899);
  });

  it('When --config names a file, then that file is loaded instead of searching', async () => {
    const { config, filepath } = await loadConfig({ cwd: dir('svcrc-yaml'), configFile: path.join(dir('explicit'), 'custom.yaml'), env: {} });
    expect(filepath).toBe(path.join(dir('explicit'), 'custom.yaml'));
    expect(config.port).toBe(9007);
    expect(config.secret).toBe('');
  });

  it('When --config names a missing file, then a clear error with exit code 2', async () => {
    const error = await failure(loadConfig({ configFile: '/nonexistent/svc.yaml', env: {} }));
    expect(error.message).toBe('config error: config file not found: /nonexistent/svc.yaml');
    expect(error).toBeInstanceOf(ConfigError);
  });

  it('When the environment sets a key, then it beats the file; a flag beats the environment', async () => {
    const env = { SVC_PORT: '7000', SVC_SECRET: 'from-env', SVC_URL: 'http://127.0.0.1:7000', SVC_DATABASE: '/tmp/env.db', SVC_HOST: '::1' };
    const fromEnv = await loadConfig({ cwd: dir('svcrc-yaml'), env });
    expect(fromEnv.config.port).toBe(7000);
    expect(fromEnv.config.secret).toBe('from-env');
    expect(fromEnv.config.client.secret).toBe('from-env');
    expect(fromEnv.config.client.url).toBe('http://127.0.0.1:7000');
    expect(fromEnv.config.database.location).toBe('/tmp/env.db');
    expect(fromEnv.config.host).toBe('::1');

    const fromFlags = await loadConfig({ cwd: dir('svcrc-yaml'), env, flags: { port: '7100', secret: 'from-flag', 'enrichment.enabled': false } });
    expect(fromFlags.config.port).toBe(7100);
    expect(fromFlags.config.secret).toBe('from-flag');
    expect(fromFlags.config.enrichment.enabled).toBe(false);
  });

  it('When a file gives database as a string, then it is the location; as an object it also sets poolSize (default 4); the environment replaces only the location', async () => {
    const root = makeConfigDir({ '.svcrc.json': JSON.stringify({ database: 'postgres://db.example/svc' }) });
    const short = await loadConfig({ cwd: root, env: {} });
    expect(short.config.database).toEqual({ location: 'postgres://db.example/svc', poolSize: 4, listenUrl: '' });
    const full = makeConfigDir({
      '.svcrc.json': JSON.stringify({ database: { location: 'postgres://db.example/svc', poolSize: 8, listenUrl: 'postgres://direct.example/svc' } }),
    });
    const withEnv = await loadConfig({ cwd: full, env: { SVC_DATABASE: 'postgres://other.example/svc' } });
    expect(withEnv.config.database).toEqual({ location: 'postgres://other.example/svc', poolSize: 8, listenUrl: 'postgres://direct.example/svc' });
    const tooSmall = makeConfigDir({ '.svcrc.json': JSON.stringify({ database: { poolSize: 0 } }) });
    expect((await failure(loadConfig({ cwd: tooSmall, env: {} }))).message).toContain('"database.poolSize"');
  });

  it('When database.listenUrl or a trustProxy entry is not what it should be, then start-up stops naming the key', async () => {
    const badListen = makeConfigDir({ '.svcrc.json': JSON.stringify({ database: { listenUrl: 'mysql://x/y' } }) });
    expect((await failure(loadConfig({ cwd: badListen, env: {} }))).message).toContain('database.listenUrl');
    const badProxy = makeConfigDir({ '.svcrc.json': JSON.stringify({ trustProxy: ['10.0.0.0/8', 'proxy.example'] }) });
    expect((await failure(loadConfig({ cwd: badProxy, env: {} }))).message).toMatch(/trustProxy.*IP address or a CIDR block/);
    const good = makeConfigDir({ '.svcrc.json': JSON.stringify({ trustProxy: ['127.0.0.1', 'fd00::/8'] }) });
    expect((await loadConfig({ cwd: good, env: {} })).config.trustProxy).toEqual(['127.0.0.1', 'fd00::/8']);
  });

  it('When the file sets nested keys, then the other nested defaults stay', async () => {
    const { config } = await loadConfig({ cwd: dir('svcrc-json'), env: {} });
    expect(config.enrichment.contact).toBe('dj@example.org');
    expect(config.enrichment.deadlineSeconds).toBe(10);
    expect(config.enrichment.musicbrainz.baseUrl).toBe('https://musicbrainz.org/ws/2');
  });

  it('When XDG_DATA_HOME is set, then the default database lives under it; else under ~/.local/share', () => {
    expect(defaultDatabasePath({ XDG_DATA_HOME: '/data/xdg' })).toBe('/data/xdg/svc/svc.db');
    expect(defaultDatabasePath({})).toBe(path.join(os.homedir(), '.local', 'share', 'svc', 'svc.db'));
    // The XDG spec says relative values are to be ignored.
    expect(defaultDatabasePath({ XDG_DATA_HOME: 'relative/dir' })).toBe(path.join(os.homedir(), '.local', 'share', 'svc', 'svc.db'));
  });

  it('When a file has an unknown key, then start-up stops naming the key and the file, exit code 2', async () => {
    const error = await failure(loadConfig({ cwd: dir('unknown-key'), env: {} }));
    expect(error.message).toBe(`config error: config file ${path.join(dir('unknown-key'), '.svcrc')}: unknown key "prot" (did you mean "port"?)`);
    expect(error).toBeInstanceOf(ConfigError);
  });

  it('When a key is mistyped, then the message suggests the nearest key at its level; "an array", not "a array"', async () => {
    const temp = makeTempDir('svc-config-');
    try {
      fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ limits: { maxConection: 5 } }));
      expect((await failure(loadConfig({ cwd: temp.dir, env: {} }))).message).toMatch(
        /unknown key "limits\.maxConection" \(did you mean "limits\.maxConnections"\?\)$/,
      );
      fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ corsOrigins: 'https://example.org' }));
      expect((await failure(loadConfig({ cwd: temp.dir, env: {} }))).message).toMatch(
        /invalid value for "corsOrigins": expected an array, got "https:\/\/example\.org"$/,
      );
      const outputs = [{ name: 'ha', type: 'mqtt', url: 'mqtt://127.0.0.1', homeAsistant: true }];
      fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ outputs }));
      expect((await failure(loadConfig({ cwd: temp.dir, env: {} }))).message).toMatch(
        /an mqtt output has no key "homeAsistant" \(did you mean "homeAssistant"\?\)$/,
      );
      fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ zzzzzz: 1 }));
      expect((await failure(loadConfig({ cwd: temp.dir, env: {} }))).message).toMatch(/unknown key "zzzzzz"$/);
    } finally {
      temp.cleanup();
    }
  });

  it('When a file has a wrong type, then start-up stops naming the key, the value and the file', async () => {
    const error = await failure(loadConfig({ cwd: dir('wrong-type'), env: {} }));
    expect(error.message).toBe(
      `config error: config file ${path.join(dir('wrong-type'), '.svcrc')}: invalid value for "port": expected a number, got "not a port"`,
    );
  });

  it('When a nested key has a wrong type, then the dotted key is named', async () => {
    const error = await failure(loadConfig({ cwd: dir('nested-wrong-type'), env: {} }));
    expect(error.message).toMatch(/invalid value for "enrichment\.musicbrainz\.enabled": expected a boolean, got "yes please"/);
    expect(error.message).toContain('.svcrc.yml');
  });

  describe('syntax errors', () => {
    let temp: { dir: string; cleanup: () => void };
    beforeEach(() => (temp = makeTempDir('svc-config-')));
    afterEach(() => temp.cleanup());
    const write = (name: string, text: string) => {
      fs.writeFileSync(path.join(temp.dir, name), text);
      return path.join(temp.dir, name);
    };

    it('When a YAML file has a syntax error, then one line names file, line, column and problem, then the line and a caret', async () => {
      const file = write('.svcrc', 'port: 9000\nhost: "127.0.0.1\nsecret: x\n');
      const error = await failure(loadConfig({ cwd: temp.dir, env: {} }));
      const [head, shown, caret, ...rest] = error.message.split('\n');
      expect(rest).toEqual([]);
      expect(head).toMatch(new RegExp(`^config error: ${escape(file)}:\\d+:\\d+: YAML: \\S.*$`));
      expect(shown?.trim()).not.toBe('');
      expect(caret).toMatch(/^\s*\^$/);
      expect(error).toBeInstanceOf(ConfigError);
    });

    it('When a YAML error is on a known line, then that line and column are named and the caret sits under the column', async () => {
      // "a: b" as a value is a second mapping where a scalar belongs; js-yaml marks the second colon.
      const file = write('.svcrc.yaml', 'port: 9000\nhost: a: b\n');
      const error = await failure(loadConfig({ cwd: temp.dir, env: {} }));
      expect(error.message.split('\n')).toEqual([`config error: ${file}:2:8: YAML: bad indentation of a mapping entry`, '  host: a: b', '         ^']);
    });

    it('When a JSON file has a trailing comma, then file:1:15 and the problem, the line and a caret under the comma', async () => {
      const file = write('.svcrc.json', '{"port": 9000,}');
      const error = await failure(loadConfig({ cwd: temp.dir, env: {} }));
      expect(error.message.split('\n')).toEqual([
        expect.stringMatching(new RegExp(`^config error: ${escape(file)}:1:15: JSON: \\S.*$`)),
        '  {"port": 9000,}',
        '                ^',
      ]);
    });

    it('When a JSON error is on a later line, then the line and column count from 1 on that line', async () => {
      const file = write('svc.json', '{\n  "port": 9000\n  "host": "::1"\n}\n');
      const error = await failure(loadConfig({ configFile: file, env: {} }));
      expect(error.message.split('\n')).toEqual([
        expect.stringMatching(new RegExp(`^config error: ${escape(file)}:3:3: JSON: `)),
        '    "host": "::1"',
        '    ^',
      ]);
    });

    it('When the line with the error sets a secret, then its value is masked', async () => {
      write('.svcrc.json', '{"secret": "hunter2" "port": 1}');
      const error = await failure(loadConfig({ cwd: temp.dir, env: {} }));
      expect(error.message).not.toContain('hunter2');
      expect(error.message).toContain('"secret": "*******"');
    });

    it.each([
      ['.svcrc.example', 'port: 9101\n', 9101],
      ['my.conf', 'port: 9102\n', 9102],
      ['my.conf', '{"port": 9103}', 9103],
      ['settings', '# comment\nport: 9104\n', 9104],
      ['svc.JSON', '{"port": 9105}', 9105],
    ])('When --config names %s, then it is read by content (%j)', async (name, text, port) => {
      const file = write(name, text);
      const { config, filepath } = await loadConfig({ configFile: file, env: {} });
      expect(filepath).toBe(file);
      expect(config.port).toBe(port);
    });

    it('When an environment variable is set but empty, then it counts as unset and the file wins', async () => {
      write('.svcrc', 'secret: from-file\nport: 9200\nclient:\n  secret: client-file\n  url: http://127.0.0.1:9200\n');
      const env = { SVC_SECRET: '', SVC_URL: '', SVC_PORT: '', SVC_HOST: '', SVC_DATABASE: '' };
      const { config } = await loadConfig({ cwd: temp.dir, env });
      expect(config.secret).toBe('from-file');
      expect(config.client.secret).toBe('client-file');
      expect(config.client.url).toBe('http://127.0.0.1:9200');
      expect(config.port).toBe(9200);
    });

    it('When --config names the shipped .svcrc.example, then it loads', async () => {
      const example = path.join(__dirname, '..', '..', '..', '.svcrc.example');
      const { filepath } = await loadConfig({ configFile: example, env: {} });
      expect(filepath).toBe(example);
    });

    it('When --config names a .conf file with a JSON syntax error, then the JSON problem is named', async () => {
      const file = write('my.conf', '{"port": 9000,}');
      const error = await failure(loadConfig({ configFile: file, env: {} }));
      expect(error.message).toMatch(/:1:15: JSON: /);
    });
  });

  it('When an environment variable is not a number, then it is named', async () => {
    const error = await failure(loadConfig({ cwd: dir('empty-dir'), env: { SVC_PORT: 'eighty' } }));
    expect(error.message).toBe('config error: environment variable SVC_PORT: invalid value for "port": expected a number, got "eighty"');
  });

  it('When a flag is out of range, then it is named', async () => {
    const error = await failure(loadConfig({ cwd: dir('empty-dir'), env: {}, flags: { port: '70000' } }));
    expect(error.message).toMatch(/^config error: command line: invalid value for "port": /);
  });
});
