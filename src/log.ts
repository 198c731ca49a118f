import querystring from 'node:querystring';

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
function batchedStderr(): LogSink {
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

/**
 * Characters that would let a logged outside field (a mount, a title, a client's error text)
 * forge or hide a line: C0 and C1 controls (CR, LF, terminal escapes), DEL, the Unicode line and
 * paragraph separators and the bidirectional overrides (docs/security.md "Logs").
 */
// eslint-disable-next-line no-control-regex -- control characters are what is escaped
const UNSAFE_IN_LOG = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Every line one line, with what could forge or hide one written as `\uXXXX`. */
export function escapeForLog(text: string): string {
  return text.replace(UNSAFE_IN_LOG, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function createLogger(sink: LogSink = batchedStderr()): Logger {
  const write = (level: string, message: string) => sink(`${new Date().toISOString()} ${level} ${escapeForLog(message)}`);
  return {
    info: (message) => write('info', message),
    warn: (message) => write('warn', message),
    error: (message) => write('error', message),
  };
}

/**
 * Replaces the value of every query parameter whose name, once decoded the way the query
 * parser decodes it (`%73ecret`, `secre%74`, `+`), reads `secret` in any case or with null bytes
 * around it, so the secret never reaches a log in any spelling (docs/decisions.md).
 */
export function redactSecretQuery(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return looksLikeSecret(name) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, start)}?${query.join('&')}`;
}

function looksLikeSecret(encodedName: string): boolean {
  // querystring.unescape is the query parser's own decoding, and never throws on a malformed escape.
  const decoded = querystring.unescape(encodedName.replaceAll('+', ' '));
  return decoded.replaceAll('\0', '').toLowerCase().includes('secret');
}

/**
 * At most one line per kind per interval: a failure that repeats on every request (disk full,
 * a connection cap) is one line a minute with a count, never a flood (docs/decisions.md). A kind
 * may name its source (an address): the first line of each is written at once. At most `maxKinds`
 * kinds are remembered; past that, kinds quiet for an interval are forgotten, and a new kind that
 * still finds no room shares one line a minute with the others that found none.
 */
export function throttledLog(
  write: (message: string) => void,
  intervalMs = 60_000,
  now: () => number = Date.now,
  maxKinds = 256,
): (kind: string, message: string) => void {
  const last = new Map<string, { at: number; suppressed: number }>();
  const roomFor = (kind: string, time: number): string => {
    if (last.has(kind) || last.size < maxKinds) return kind;
    for (const [known, entry] of last) if (time - entry.at >= intervalMs) last.delete(known);
    return last.size < maxKinds ? kind : OVERFLOW_KIND;
  };
  return function logOncePerInterval(wantedKind, message) {
    const time = now();
    const kind = roomFor(wantedKind, time);
    const entry = last.get(kind);
    if (entry && time - entry.at < intervalMs) {
      entry.suppressed += 1;
      return;
    }
    const repeats = entry && entry.suppressed > 0 ? ` (${entry.suppressed} more since the last report)` : '';
    last.set(kind, { at: time, suppressed: 0 });
    write(`${message}${repeats}`);
  };
}

/** The kind that lines share once throttledLog remembers as many kinds as it may. */
const OVERFLOW_KIND = '\0overflow';
