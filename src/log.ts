// The one place log lines are formatted. Everything goes to stderr (stdout is for data).

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export type LogSink = (line: string) => void;

export function createLogger(sink: LogSink = (line) => process.stderr.write(line + '\n')): Logger {
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
