import path from 'node:path';
import { Command } from 'commander';
import { addClientOptions, createClient } from '../../../src/cli/client-options';
import { CliError } from '../../../src/cli/exit-codes';
import { ConfigError } from '../../../src/errors';

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
