import { runCli } from '../helpers/run-cli';
import { EXIT_CODE_HELP } from '../../src/cli/exit-codes';

// --help on every command: on stdout, exit 0, with an example; usage errors exit 2.

describe('svc --help', () => {
  test('When asked for the overview, then it lists every command and the exit-code table on stdout', async () => {
    const result = await runCli(['--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    for (const command of ['serve', 'submit', 'last', 'history', 'status', 'watch-images']) expect(result.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    expect(result.stdout).toContain(EXIT_CODE_HELP);
    expect(result.stdout).toContain('Examples:\n  $ svc');
  });

  test.each(['serve', 'submit', 'last', 'history', 'status', 'watch-images'])(
    'When asked about %s, then the help has an example and goes to stdout with exit 0',
    async (command) => {
      const result = await runCli([command, '--help']);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(new RegExp(`^Usage: svc ${command}`));
      expect(result.stdout).toMatch(new RegExp(`Examples:\\n  \\$ svc ${command}`));
    },
  );

  test.each(['submit', 'last', 'history', 'status', 'watch-images'])('When asked about %s, then the shared client options are listed', async (command) => {
    const { stdout } = await runCli([command, '--help']);
    for (const option of ['--url <url>', '--secret <secret>', '--config <file>', '--json', '--timeout <seconds>']) expect(stdout).toContain(option);
  });

  test('When the overview says which commands send the secret, then those are exactly the ones whose --secret help says it is sent', async () => {
    const overview = (await runCli(['--help'])).stdout.replace(/\s+/g, ' ');
    const claimed = /Only ([a-z-]+(?:(?:, | and )[a-z-]+)*) sends? the secret\./.exec(overview)?.[1]?.split(/, | and /) ?? [];
    const sending: string[] = [];
    for (const command of ['submit', 'last', 'history', 'status', 'watch-images', 'outputs', 'requests']) {
      const help = (await runCli([command, '--help'])).stdout.replace(/\s+/g, ' ');
      if (help.includes('--secret <secret> shared secret, sent in')) sending.push(command);
    }
    expect(sending).toEqual(['submit', 'outputs', 'requests']);
    expect(claimed.sort()).toEqual([...sending].sort());
  });

  test('When asked about submit, then --secret is said to go in the X-SVC-Client-Auth header', async () => {
    const { stdout } = await runCli(['submit', '--help']);
    expect(optionHelp(stdout, '--secret')).toMatch(/sent in the X-SVC-Client-Auth request header/);
  });

  // Reads (GET /v1/last, /v1/status, the image stream) need no secret (docs/http-api.md),
  // and these commands never send one: their help must not claim otherwise.
  test.each(['last', 'status', 'watch-images'])('When asked about %s, then --secret is said to be never sent', async (command) => {
    const { stdout } = await runCli([command, '--help']);
    const help = optionHelp(stdout, '--secret');
    expect(help).toMatch(/never sent/);
    expect(help).not.toMatch(/X-SVC-Client-Auth/);
  });

  test.each([
    [['last', '--prot', '1'], /^svc: error: unknown option '--prot'$/m],
    [['lsat'], /^svc: error: unknown command 'lsat'$/m],
    [['last', '--timeout', 'soon'], /^svc: error: option '--timeout <seconds>' argument 'soon' is invalid/m],
    [['last', '--url'], /^svc: error: option '--url <url>' argument missing$/m],
  ])('When commander refuses %j, then its message carries the svc: prefix and the exit code is 2', async (args, message) => {
    const result = await runCli(args);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/^error:/m);
  });

  test('When no command is given, then the help goes to stderr and the exit code is 2', async () => {
    const result = await runCli([]);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain('Usage: svc');
  });

  test('When the command is unknown, then it exits 2', async () => {
    const result = await runCli(['lsat']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(/unknown command 'lsat'/);
  });

  test.each([
    [['outputs', 'tset', 'chat'], "unknown command 'outputs tset'\n(Did you mean outputs test?)"],
    [['requests', 'lsit'], "unknown command 'requests lsit'\n(Did you mean requests list?)"],
    [['outputs', 'zzzz'], "unknown command 'outputs zzzz'\n(outputs takes: test, add)"],
    [['rpeort', 'ppl'], "unknown command 'rpeort'\n(Did you mean report?)"],
  ])('When a subcommand is mistyped (%j), then "did you mean", not "too many arguments", exit 2 and nothing sent', async (args, message) => {
    // Port 9 (discard) on loopback: nothing listens there, and nothing must be asked.
    const result = await runCli([...args, '--url', 'http://127.0.0.1:9']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain(`svc: error: ${message}`);
    expect(result.stderr).not.toMatch(/too many arguments|cannot reach|refused/);
  });

  test('When --version is asked for, then it prints the version on stdout with exit 0', async () => {
    const result = await runCli(['--version']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});

/** The help text of one option, continuation lines included. */
function optionHelp(help: string, option: string): string {
  const start = help.indexOf(`  ${option} `);
  expect(start).toBeGreaterThanOrEqual(0);
  const rest = help.slice(start);
  const next = rest.slice(1).search(/\n {2}-/);
  return (next < 0 ? rest : rest.slice(0, next + 1)).replace(/\s+/g, ' ');
}
