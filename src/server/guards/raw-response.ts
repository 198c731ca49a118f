import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERRORS, type ErrorCode } from '../../errors';
import { SECURITY_HEADERS, SECURITY_HEADER_LINES } from './security-headers';

// Answers written straight to a socket, for the requests Koa never sees: a failed WebSocket
// upgrade, and requests Node's HTTP parser rejects (headers over 16 KiB, garbage).
// Still `{"error": "..."}`, like every other error of svc.

/**
 * How long an answered socket may still drain what its client sends before it is destroyed:
 * an `Upgrade` request with a body to a path that is no WebSocket used to hold its socket after
 * the client had gone (docs/security.md "Nothing outlives its client").
 */
const LINGER_MS = 2000;

export function endWithError(socket: Duplex, code: ErrorCode, message?: string, headers: Readonly<Record<string, string>> = {}): void {
  const { status } = ERRORS[code];
  const body = JSON.stringify({ error: message ?? ERRORS[code].message });
  closeAfterAnswer(socket);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      SECURITY_HEADER_LINES +
      Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/**
 * The answer goes out; what the client still sends is read and dropped (so its end is seen and
 * the socket closes), and after LINGER_MS the socket goes whatever the client does.
 */
function closeAfterAnswer(socket: Duplex): void {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.on('error', () => socket.destroy());
  socket.on('data', () => undefined);
  socket.resume();
}

/** Node's `clientError`: answer in JSON when the socket can still take it. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  endWithError(socket, CLIENT_ERRORS[error.code ?? ''] ?? 'MALFORMED_REQUEST');
}

/** Node's parser and timeout errors that are not "malformed": headers too large, too slow (Node's own answer would be a bare 408). */
const CLIENT_ERRORS: Readonly<Record<string, ErrorCode>> = {
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
};

/** Node's `checkExpectation` (an Expect other than 100-continue): JSON 417, not Node's bare one. */
export function answerUnknownExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify({ error: ERRORS.EXPECTATION_FAILED.message });
  response.writeHead(ERRORS.EXPECTATION_FAILED.status, {
    'Content-Type': 'application/json; charset=utf-8',
    ...SECURITY_HEADERS,
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  response.end(body);
}
