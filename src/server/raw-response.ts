import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERRORS, type ErrorCode } from '../errors';

// Answers written straight to a socket, for the requests Koa never sees: a failed WebSocket
// upgrade, and requests Node's HTTP parser rejects (headers over 16 KiB, garbage).
// Still `{"error": "..."}`, like every other error of svc.

export function endWithError(socket: Duplex, code: ErrorCode, message?: string): void {
  const { status } = ERRORS[code];
  const body = JSON.stringify({ error: message ?? ERRORS[code].message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      'X-Content-Type-Options: nosniff\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
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
    'X-Content-Type-Options': 'nosniff',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  response.end(body);
}
