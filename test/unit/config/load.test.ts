import os from 'node:os';
import path from 'node:path';
import { defaultDatabasePath } from '../../../src/config/defaults';
import { loadConfig } from '../../../src/config/load';
import { StartupError } from '../../../src/errors';

const fixtures = path.join(__dirname, '..', '..', 'fixtures', 'config');
const dir = (name: string) => path.join(fixtures, name);

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
    expect(config.client.url).toBe('http://127.0.0.1:8899');
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
    expect(error.exitCode).toBe(2);
  });

  it('When the environment sets a key, then it beats the file; a flag beats the environment', async () => {
    const env = { SVC_PORT: '7000', SVC_SECRET: 'from-env', SVC_URL: 'http://127.0.0.1:7000', SVC_DATABASE: '/tmp/env.db', SVC_HOST: '::1' };
    const fromEnv = await loadConfig({ cwd: dir('svcrc-yaml'), env });
    expect(fromEnv.config.port).toBe(7000);
    expect(fromEnv.config.secret).toBe('from-env');
    expect(fromEnv.config.client.secret).toBe('from-env');
    expect(fromEnv.config.client.url).toBe('http://127.0.0.1:7000');
    expect(fromEnv.config.database).toBe('/tmp/env.db');
    expect(fromEnv.config.host).toBe('::1');

    const fromFlags = await loadConfig({ cwd: dir('svcrc-yaml'), env, flags: { port: '7100', secret: 'from-flag', 'enrichment.enabled': false } });
    expect(fromFlags.config.port).toBe(7100);
    expect(fromFlags.config.secret).toBe('from-flag');
    expect(fromFlags.config.enrichment.enabled).toBe(false);
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
    expect(error.message).toBe(`config error: config file ${path.join(dir('unknown-key'), '.svcrc')}: unknown key "prot"`);
    expect(error.exitCode).toBe(2);
  });

  it('When a file has a wrong type, then start-up stops naming the key, the value and the file', async () => {
    const error = await failure(loadConfig({ cwd: dir('wrong-type'), env: {} }));
    expect(error.message).toBe(`config error: config file ${path.join(dir('wrong-type'), '.svcrc')}: invalid value for "port": expected a number, got "not a port"`);
  });

  it('When a nested key has a wrong type, then the dotted key is named', async () => {
    const error = await failure(loadConfig({ cwd: dir('nested-wrong-type'), env: {} }));
    expect(error.message).toMatch(/invalid value for "enrichment\.musicbrainz\.enabled": expected a boolean, got "yes please"/);
    expect(error.message).toContain('.svcrc.yml');
  });

  it('When a file cannot be parsed, then one clear line names the file', async () => {
    const error = await failure(loadConfig({ cwd: dir('broken-yaml'), env: {} }));
    expect(error.message).toMatch(/^config error: cannot read config file .*broken-yaml.*\.svcrc: /);
    expect(error.message).not.toContain('\n');
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
