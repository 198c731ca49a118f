import type { Streams } from './io';

// What main.ts hands to every command: the streams, and a way to learn about Ctrl-C.

export interface CliContext {
  io: Streams;
  /**
   * An AbortSignal aborted by SIGINT or SIGTERM. The handlers are only installed when a
   * long-running command asks, so a one-shot command keeps the default Ctrl-C behaviour.
   */
  untilInterrupted(): AbortSignal;
}

export interface ResultOptions {
  /**
   * By default a command ends (exit 0) as soon as stdout's reader goes away, as pipeline
   * tools do; `svc serve` keeps serving instead.
   */
  keepRunningWhenStdoutCloses?: boolean;
}

/** A command's action hands its outcome (an exit code) back to main.ts. */
export type SetResult = (done: Promise<number>, options?: ResultOptions) => void;
