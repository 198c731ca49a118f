import { Command, CommanderError } from 'commander';
import { StartupError, errorMessage } from '../errors';
import { VERSION } from '../version';
import { registerServe } from './commands/serve';
import { EXIT, EXIT_CODE_HELP } from './exit-codes';

// Builds the program, runs it, and maps every outcome to an exit code: the only process.exit.

export function buildProgram(setResult: (done: Promise<number>) => void): Command {
  const program = new Command('svc')
    .description('now-playing track metadata service and client')
    .version(VERSION, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .addHelpText('after', `\n${EXIT_CODE_HELP}`);
  registerServe(program, setResult);
  return program;
}

export async function main(argv: readonly string[]): Promise<void> {
  let result: Promise<number> = Promise.resolve(EXIT.OK);
  const program = buildProgram((done) => {
    result = done;
  });
  let code: number;
  try {
    await program.parseAsync([...argv]);
    code = await result;
  } catch (error) {
    code = exitCodeFor(error);
  }
  process.exit(code);
}

function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    // --help and --version are successes; commander already printed the message.
    return error.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  }
  if (error instanceof StartupError) {
    process.stderr.write(`svc: ${error.message}\n`);
    return error.exitCode;
  }
  process.stderr.write(`svc: unexpected error: ${errorMessage(error)}\n`);
  return EXIT.SERVER_ERROR;
}
