import { Command, CommanderError } from 'commander';
import { ConfigError, StartupError, errorMessage } from '../errors';
import { versionText } from '../version';
import { registerBackup } from './commands/backup';
import { registerCompletion } from './commands/completion';
import { registerEdit } from './commands/edit';
import { registerHistory } from './commands/history';
import { registerLast } from './commands/last';
import { registerLibrary } from './commands/library';
import { registerOutputs } from './commands/outputs';
import { registerRequests } from './commands/requests';
import { registerListeners } from './commands/listeners';
import { registerReport } from './commands/report';
import { registerServe } from './commands/serve';
import { registerStatus } from './commands/status';
import { registerSubmit } from './commands/submit';
import { registerWatchImages } from './commands/watch-images';
import type { CliContext, SetResult } from './context';
import { CliError, EXIT, EXIT_CODE_HELP, type ExitCode } from './exit-codes';
import { createStreams, type Streams } from './io';
import { guardSubcommands } from './unknown-subcommand';
import { DEFAULT_PORT } from '../config/defaults';

// The composition root of the CLI: builds the program, runs it, and maps every outcome to an
// exit code. The only process.exit. Each command requires what only it needs (the server
// stack, ws, chalk, the config loader) when it runs, so that `svc last` starts fast.

const GLOBAL_HELP = `
Client commands (submit, last, history, status, watch-images, outputs, requests) share --url, --secret, --config, --json
and --timeout. The server address and secret come from the flag, else the environment
(SVC_URL, SVC_SECRET), else the config file (client.url, client.secret, else the port, host
and secret its server part sets), else http://127.0.0.1:${DEFAULT_PORT} and no secret. The config file is
the first found in the working directory, the folders above it, then $XDG_CONFIG_HOME/svc/
(else ~/.config/svc/); svc status shows which. stdout carries only data, stderr only diagnostics.
Colour only on a terminal and never with --json; NO_COLOR=1 turns it off, else FORCE_COLOR=1
turns it on. An empty variable counts as unset. Only submit, outputs and requests send the secret.

Examples:
  $ svc serve --secret s3cret &
  $ svc submit --secret s3cret --artist 'Daft Punk' --title 'One More Time'
  $ svc last --follow --format '{{artist}} - {{title}}'

${EXIT_CODE_HELP}`;

/** `svc --version`: the release and commit, and the newest schema of each backend this build knows (docs/running.md "Versions"). */
function versionReport(): string {
  // Read when asked: the client commands never load the store (test/cli/last.test.ts "Start-up").
  const { latestVersion } = require('../store/migrations') as typeof import('../store/migrations');
  const { MIGRATIONS } = require('../store/sqlite/migrations') as typeof import('../store/sqlite/migrations');
  const { POSTGRES_MIGRATIONS } = require('../store/postgres/migrations') as typeof import('../store/postgres/migrations');
  return `${versionText()}\ndatabase schema: SQLite ${latestVersion(MIGRATIONS)}, PostgreSQL ${latestVersion(POSTGRES_MIGRATIONS)}`;
}

function buildProgram(ctx: CliContext, setResult: SetResult): Command {
  const program = new Command('svc')
    .description('now-playing track metadata service and client')
    .option('-V, --version', 'output the version number')
    .showHelpAfterError('(run with --help for usage)')
    // Commander's own errors ("error: unknown option '--prot'") carry the same prefix as ours.
    .configureOutput({
      writeOut: (text) => ctx.io.writeOut(text),
      writeErr: (text) => ctx.io.writeErr(text),
      outputError: (text, write) => write(`svc: ${text}`),
    })
    .exitOverride()
    .addHelpText('after', GLOBAL_HELP)
    .on('option:version', () => {
      ctx.io.writeOut(`${versionReport()}\n`);
      throw new CommanderError(0, 'commander.version', versionReport());
    });
  registerServe(program, ctx, setResult);
  registerSubmit(program, ctx, setResult);
  registerLast(program, ctx, setResult);
  registerHistory(program, ctx, setResult);
  registerEdit(program, ctx, setResult);
  registerStatus(program, ctx, setResult);
  registerOutputs(program, ctx, setResult);
  registerRequests(program, ctx, setResult);
  registerReport(program, ctx, setResult);
  registerListeners(program, ctx, setResult);
  registerLibrary(program, ctx, setResult);
  registerWatchImages(program, ctx, setResult);
  registerBackup(program, ctx, setResult);
  // Last: its script lists every command registered before it.
  registerCompletion(program, ctx, setResult);
  guardSubcommands(program);
  return program;
}

export async function main(argv: readonly string[]): Promise<void> {
  const io = createStreams();
  let interruption: AbortController | undefined;
  const ctx: CliContext = {
    io,
    untilInterrupted() {
      if (!interruption) {
        const controller = new AbortController();
        process.once('SIGINT', () => controller.abort('SIGINT'));
        process.once('SIGTERM', () => controller.abort('SIGTERM'));
        interruption = controller;
      }
      return interruption.signal;
    },
  };

  let result: Promise<number> = Promise.resolve(EXIT.OK);
  let endWhenStdoutCloses = true;
  const program = buildProgram(ctx, (done, options) => {
    // Handled below; this only keeps an early rejection from counting as unhandled.
    done.catch(() => undefined);
    result = done;
    endWhenStdoutCloses = !options?.keepRunningWhenStdoutCloses;
  });

  let code: number;
  try {
    await program.parseAsync([...argv]);
    // A reader that went away (`svc last --follow | head -n 1`) ends the command quietly, with 0.
    if (endWhenStdoutCloses) io.watchStdoutReader();
    code = await (endWhenStdoutCloses ? Promise.race([result, io.stdoutClosed.then(() => EXIT.OK)]) : result);
  } catch (error) {
    code = exitCodeFor(error, io);
  }
  await io.flush();
  process.exit(code);
}

/** The one mapping from what went wrong to the exit-code table (exit-codes.ts). */
function exitCodeFor(error: unknown, io: Streams): ExitCode {
  if (error instanceof CommanderError) {
    // --help and --version are successes; commander already printed the message.
    return error.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  }
  if (error instanceof CliError) {
    io.err(`svc: ${error.message}`);
    return error.exitCode;
  }
  if (error instanceof ConfigError) {
    io.err(`svc: ${error.message}`);
    return EXIT.USAGE;
  }
  if (error instanceof StartupError) {
    io.err(`svc: ${error.message}`);
    return EXIT.SERVER_ERROR;
  }
  io.err(`svc: unexpected error: ${errorMessage(error)}`);
  return EXIT.SERVER_ERROR;
}
