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

  test.each(['serve', 'submit', 'last', 'history', 'status', 'watch-images'])('When asked about %s, then the help has an example and goes to stdout with exit 0', async (command) => {
    const result = await runCli([command, '--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(new RegExp(`^Usage: svc ${command}`));
    expect(result.stdout).toMatch(new RegExp(`Examples:\\n  \\$ svc ${command}`));
  });

  test.each(['submit', 'last', 'history', 'status', 'watch-images'])('When asked about %s, then the shared client options are listed', async (command) => {
    const { stdout } = await runCli([command, '--help']);
    for (const option of ['--url <url>', '--secret <secret>', '--config <file>', '--json', '--timeout <seconds>']) expect(stdout).toContain(option);
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

  test('When --version is asked for, then it prints the version on stdout with exit 0', async () => {
    const result = await runCli(['--version']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});
