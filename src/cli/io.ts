import { watchReader } from './reader-watch';

// The only module that touches process.stdin/stdout/stderr. stdout carries data only,
// stderr diagnostics only. Each line is one write, so a pipe sees it at once.

export interface Streams {
  readonly env: NodeJS.ProcessEnv;
  readonly stdinIsTTY: boolean;
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
  /** Writes one line of data to stdout (newline added). A no-op once the reader is gone. */
  out(line: string): void;
  /** Writes one diagnostic line to stderr (newline added). */
  err(line: string): void;
  /** stdout as a stream, for a long file piped with backpressure (svc report). */
  readonly stdout: NodeJS.WritableStream;
  /** Rewrites the last line of stderr on a terminal (a progress line); '' clears it. */
  status(line: string): void;
  /** Raw writes, for commander's own help and error text. */
  writeOut(text: string): void;
  writeErr(text: string): void;
  /** stdin split into lines (CRLF or LF), as they arrive. */
  stdinLines(): AsyncIterable<string>;
  /** Resolves when stdout's reader has gone away (EPIPE), e.g. `svc last --follow | head -n 1`. */
  readonly stdoutClosed: Promise<void>;
  /** Also notice a reader that goes away while nothing is being written (see reader-watch.ts). */
  watchStdoutReader(): void;
  /** Resolves once everything written to stdout has been handed to the OS. */
  flush(): Promise<void>;
}

export function createStreams(): Streams {
  const { stdin, stdout, stderr } = process;
  let stdoutOpen = true;
  let onStdoutClosed: () => void = () => {};
  const stdoutClosed = new Promise<void>((resolve) => (onStdoutClosed = resolve));

  // A closed pipe is a normal way for a pipeline to end: stop writing, exit quietly.
  stdout.on('error', (error: NodeJS.ErrnoException) => {
    stdoutOpen = false;
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') onStdoutClosed();
    else {
      writeErrSafely(`svc: cannot write to stdout: ${error.message}\n`);
      onStdoutClosed();
    }
  });
  // Nothing useful can be done when stderr itself is gone; never crash over it.
  let stderrOpen = true;
  stderr.on('error', () => (stderrOpen = false));
  const writeErrSafely = (text: string) => {
    if (stderrOpen) stderr.write(text);
  };
  const writeOut = (text: string) => {
    if (stdoutOpen) stdout.write(text);
  };

  return {
    env: process.env,
    stdinIsTTY: stdin.isTTY === true,
    stdoutIsTTY: stdout.isTTY === true,
    stderrIsTTY: stderr.isTTY === true,
    out: (line) => writeOut(line + '\n'),
    err: (line) => writeErrSafely(line + '\n'),
    stdout,
    status: (line) => {
      if (stderr.isTTY === true) writeErrSafely(`\r\x1b[2K${line}`);
    },
    writeOut,
    writeErr: writeErrSafely,
    // readline is only needed by `svc submit -`: required then, not at start-up.
    stdinLines: () => (require('node:readline') as typeof import('node:readline')).createInterface({ input: stdin, crlfDelay: Infinity, terminal: false }),
    stdoutClosed,
    watchStdoutReader: () => {
      watchReader(stdout.fd, () => {
        stdoutOpen = false;
        onStdoutClosed();
      });
    },
    flush: () =>
      new Promise<void>((resolve) => {
        if (!stdoutOpen || stdout.writableLength === 0) resolve();
        else stdout.write('', () => resolve());
      }),
  };
}

/**
 * Colour decision (pure), per docs/decisions.md "Command-line environment": never with --json;
 * NO_COLOR (non-empty) turns it off; else FORCE_COLOR (non-empty) turns it on, unless it is `0`
 * or `false`; else only when stdout is a terminal. Empty counts as unset, as no-color.org and
 * force-color.org define it.
 */
export function colorEnabled(env: NodeJS.ProcessEnv, stdoutIsTTY: boolean, json: boolean): boolean {
  if (json) return false;
  if (env.NO_COLOR) return false;
  const force = env.FORCE_COLOR;
  if (force) return !['0', 'false'].includes(force.toLowerCase());
  return stdoutIsTTY;
}
