import path from 'node:path';
import { Command } from 'commander';
import { addClientOptions, createClient } from '../../../src/cli/client-options';
import { describeNetworkError } from '../../../src/cli/client';
import { CliError } from '../../../src/cli/exit-codes';
import { ConfigError } from '../../../src/errors';
import { imageFileName } from '../../../src/cli/image-files';
import { colorEnabled } from '../../../src/cli/io';

describe('colorEnabled', () => {
  test.each([
    // Rows: env, stdout is a TTY, --json, colour expected (docs/decisions.md "Command-line environment").
    [{}, true, false, true],
    [{}, false, false, false],
    [{}, true, true, false],
    [{ NO_COLOR: '1' }, true, false, false],
    [{ NO_COLOR: '' }, true, false, true],
    [{ NO_COLOR: '' }, false, false, false],
    [{ FORCE_COLOR: '1' }, false, false, true],
    [{ FORCE_COLOR: '3' }, false, false, true],
    [{ FORCE_COLOR: '' }, false, false, false],
    [{ FORCE_COLOR: '' }, true, false, true],
    [{ FORCE_COLOR: '0' }, true, false, false],
    [{ FORCE_COLOR: 'false' }, true, false, false],
    [{ FORCE_COLOR: 'FALSE' }, true, false, false],
    [{ FORCE_COLOR: '1', NO_COLOR: '1' }, false, false, false],
    [{ FORCE_COLOR: '1', NO_COLOR: '1' }, true, false, false],
    [{ FORCE_COLOR: '', NO_COLOR: '1' }, true, false, false],
    [{ FORCE_COLOR: '', NO_COLOR: '' }, false, false, false],
    [{ FORCE_COLOR: '1', NO_COLOR: '' }, false, false, true],
    [{ FORCE_COLOR: '1' }, true, true, false],
  ])('When env is %j, TTY %s, --json %s, then colour is %s', (env, tty, json, expected) => {
    expect(colorEnabled(env, tty, json)).toBe(expected);
  });
});

describe('createClient: the server URL (--url)', () => {
  // An explicit config file (so none is searched for); --url goes before its client.url.
  const configFile = path.join(__dirname, '../../fixtures/config/explicit/custom.yaml');
  const baseUrlOf = async (url: string) => (await createClient({ url, config: configFile })).settings.baseUrl.href;

  test('When the URL has a path prefix, then it keeps it and ends in /', async () => {
    expect(await baseUrlOf('https://radio.example/svc')).toBe('https://radio.example/svc/');
    expect(await baseUrlOf('http://127.0.0.1:8899')).toBe('http://127.0.0.1:8899/');
  });

  test.each(['not a url', 'ftp://host/', 'http://u:p@host/', 'http://host/?secret=x', 'http://host/#x'])(
    'When the URL is %j, then it is a usage error',
    async (raw) => {
      const error: unknown = await baseUrlOf(raw).then(
        () => undefined,
        (refused: unknown) => refused,
      );
      // Refused by the config's check (not an http(s) URL) or by the client's own: both exit 2.
      expect(error instanceof ConfigError || (error instanceof CliError && error.exitCode === 2)).toBe(true);
      expect((error as Error).message).not.toMatch(/:p@|secret=x/);
    },
  );
});

describe('addClientOptions: --timeout', () => {
  const timeoutOf = (value: string): unknown => {
    const command = addClientOptions(new Command('probe').exitOverride().configureOutput({ writeErr: () => undefined }), 10);
    command.parse(['--timeout', value], { from: 'user' });
    return command.opts<{ timeout: unknown }>().timeout;
  };

  test('accepts positive numbers of seconds and refuses the rest', () => {
    expect(timeoutOf('2.5')).toBe(2.5);
    for (const bad of ['0', '-1', '', 'abc', 'Infinity']) expect(() => timeoutOf(bad)).toThrow();
  });
});

describe('image file names', () => {
  const key = 'ab'.repeat(32);
  test.each([
    ['image/jpeg', 'jpg'],
    ['image/png; charset=binary', 'png'],
    ['image/svg+xml', 'svg'],
    ['image/x-whatever', 'bin'],
    ['image/heic', 'heic'],
    ['text/html', 'bin'],
  ])('When the type is %j, then the extension is %j', (type, extension) => {
    expect(imageFileName(key, type)).toBe(`${key}.${extension}`);
  });

  test('When the key is a SHA-256 hex digest, then the name is <key>.<ext>, lower case', () => {
    expect(imageFileName(key.toUpperCase(), 'image/webp')).toBe(`${key}.webp`);
  });

  test.each(['../../etc/passwd', 'ab'.repeat(31), `${key}/x`, ''])('When the key is %j, then there is no file name', (bad) => {
    expect(imageFileName(bad, 'image/png')).toBeNull();
  });
});

describe('describeNetworkError', () => {
  test('When fetch wraps a refused connection, then it says "connection refused"', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(describeNetworkError(new TypeError('fetch failed', { cause }))).toBe('connection refused');
  });
});
