// One exit-code table for every command (listed in `svc --help` and docs/cli.md), and the one
// function that turns an HTTP status into an exit code.

export const EXIT = {
  OK: 0,
  SERVER_ERROR: 1,
  USAGE: 2,
  AUTH_REFUSED: 3,
  UNREACHABLE: 4,
  INPUT_REJECTED: 5,
  NOTHING_PLAYING: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODE_HELP = `Exit codes:
  0  ok
  1  server error (5xx, 408), an unexpected answer, a start-up failure, or problems found (svc report)
  2  usage or config error
  3  authentication refused (403)
  4  server unreachable (refused, unknown host, or no answer within --timeout)
  5  input rejected (400, 413)
  6  nothing playing (svc last)`;

/** A failure a client command reports as one line on stderr, then exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The exit code for an HTTP answer: the table of docs/cli.md "Exit codes", in one place. */
export function exitCodeForStatus(status: number): ExitCode {
  if (status >= 200 && status < 300) return EXIT.OK;
  if (status === 401 || status === 403) return EXIT.AUTH_REFUSED;
  // 415 and 422 cannot come from our own requests, but they are the server refusing input too.
  if (status === 400 || status === 413 || status === 415 || status === 422) return EXIT.INPUT_REJECTED;
  // 408, every 5xx, and anything else unexpected (a 404 means the URL is not an svc server).
  return EXIT.SERVER_ERROR;
}

/**
 * When several submissions fail (`svc submit -`), the exit code is the most severe failure:
 * the more of the setup is broken, the more severe. unreachable > auth refused > server error
 * > input rejected > ok.
 */
const SEVERITY: readonly ExitCode[] = [EXIT.OK, EXIT.INPUT_REJECTED, EXIT.SERVER_ERROR, EXIT.AUTH_REFUSED, EXIT.UNREACHABLE];

export function mostSevere(a: ExitCode, b: ExitCode): ExitCode {
  return SEVERITY.indexOf(b) > SEVERITY.indexOf(a) ? b : a;
}
