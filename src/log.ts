// The one place log lines are formatted. Everything goes to stderr (stdout is for data).

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export type LogSink = (line: string) => void;

/**
 * stderr, one write per event-loop turn: under load the access log costs one syscall per turn
 * instead of one per request. Lines still pending when the process exits are written then.
 */
export function batchedStderr(): LogSink {
  sharedStderrSink ??= createBatchedStderr();
  return sharedStderrSink;
}

let sharedStderrSink: LogSink | undefined;

function createBatchedStderr(): LogSink {
  let pending = '';
  const flush = () => {
    if (pending === '') return;
    const text = pending;
    pending = '';
    process.stderr.write(text);
  };
  process.on('exit', flush);
  return (line) => {
    if (pending === '') setImmediate(flush);
    pending += line + '\n';
  };
}

export function createLogger(sink: LogSink = batchedStderr()): Logger {
  const write = (level: string, message: string) => sink(`${new Date().toISOString()} ${level} ${message}`);
  return {
    info: (message) => write('info', message),
    warn: (message) => write('warn', message),
    error: (message) => write('error', message),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** Replaces the value of every `secret` query parameter, so secrets never reach a log. */
export function redactUrl(url: string): string {
  return url.replace(/([?&]secret=)[^&#]*/gi, '$1[redacted]');
}
