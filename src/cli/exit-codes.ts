// One exit-code table for every command (listed in `svc --help` and the README).

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
  1  server error (5xx, 408) or start-up failure
  2  usage or config error
  3  authentication refused (403)
  4  server unreachable
  5  input rejected (400, 413)
  6  nothing playing (svc last)`;
