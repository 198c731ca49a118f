import net, { type AddressInfo, type Socket } from 'node:net';
import { StartupError } from '../errors';
import type { Logger } from '../log';
import { throttledLog } from '../log';
import { runSourceSession } from './source-session';
import {
  CONTINUE,
  MAX_HEAD_BYTES,
  SOURCE_ACCEPTED,
  authenticationRequired,
  badRequest,
  basicPassword,
  endOfHead,
  mountInUse,
  notFound,
  parseRequestHead,
  type RequestHead,
} from './source-protocol';
import { createSubmitter, type SubmissionPort, type SubmitFields } from './submitter';
import { answerTitleUpdate, passwordAccepted } from './title-update';

// The second entry point beside the HTTP API (docs/dj-software.md): a listener that DJ software
// takes for an Icecast 2.4 server. A raw TCP server, not node:http: a SOURCE request (HTTP/1.0,
// no Content-Length) is followed by an endless body that an HTTP parser would read as the next
// request. One request per connection, answered HTTP/1.0 with Connection: Close, as Icecast does.

export interface IcecastListenerOptions {
  host: string;
  port: number;
  /** Empty: no password is asked. */
  password: string;
  submission: SubmissionPort;
  logger: Logger;
  /** Silence before the request head is complete, and from a connected source (Icecast's source-timeout is 10 s). */
  idleTimeoutMs?: number;
  maxConnections?: number;
}

export interface RunningIcecastListener {
  port: number;
  url: string;
  close(): Promise<void>;
}

const MAX_MOUNT_LENGTH = 256;

export async function startIcecastListener(options: IcecastListenerOptions): Promise<RunningIcecastListener> {
  const { logger, password } = options;
  const submit = createSubmitter(options.submission);
  const mounts = new Set<string>();
  const sockets = new Set<Socket>();
  const reportRefusal = throttledLog((message) => logger.warn(message));
  const idleTimeoutMs = options.idleTimeoutMs ?? 10_000;

  const route = (socket: Socket, head: RequestHead, rest: Buffer) => {
    const from = socket.remoteAddress ?? 'unknown';
    if (head.method === 'SOURCE' || head.method === 'PUT') {
      acceptSource(socket, head, rest, from);
      return;
    }
    if (head.method === 'GET' && (head.path === '/admin/metadata' || head.path === '/admin/metadata.xsl' || head.path === '/admin.cgi')) {
      const kind = head.path === '/admin.cgi' ? 'shoutcast' : 'icecast';
      // The answer waits for the submission (at most processingTimeoutSeconds), not for the client.
      socket.setTimeout(0);
      void answerTitleUpdate(kind, head, from, { password, submit, logger, onRefused: (message) => reportRefusal('title-password', message) }).then((answer) =>
        socket.end(answer),
      );
      return;
    }
    // Icecast 2.4.4 closes without a word on other methods; libshout's TLS probe (`OPTIONS *` with
    // `Upgrade: TLS/1.0`) reads that as "no TLS here" and goes on in plain HTTP.
    if (head.method !== 'GET') {
      socket.end();
      return;
    }
    // libshout asks `GET /admin/!POKE` next; Icecast's answer is this 400, and libshout goes on.
    if (head.path.startsWith('/admin')) socket.end(badRequest('Unrecognised command'));
    else socket.end(notFound('svc takes sources here; listeners are not served'));
  };

  const acceptSource = (socket: Socket, head: RequestHead, rest: Buffer, from: string) => {
    if (!passwordAccepted(basicPassword(head.headers.get('authorization')), password)) {
      // libshout's first request carries no password on purpose (a challenge): not worth a warning.
      if (head.headers.has('authorization')) reportRefusal('source-password', `icecast listener: source from ${from} refused: wrong password`);
      socket.end(authenticationRequired());
      return;
    }
    const mount = head.path;
    if (!mount.startsWith('/') || mount.length > MAX_MOUNT_LENGTH) {
      socket.end(badRequest('Invalid mountpoint'));
      return;
    }
    // An empty body is a probe (libshout's challenge without a password to ask): yes, and no mount taken.
    if (head.headers.get('content-length') === '0') {
      socket.end(SOURCE_ACCEPTED);
      return;
    }
    if (mounts.has(mount)) {
      logger.warn(`icecast listener: source from ${from} refused: mountpoint ${mount} in use`);
      socket.end(mountInUse());
      return;
    }
    mounts.add(mount);
    socket.once('close', () => mounts.delete(mount));
    if (/100-continue/i.test(head.headers.get('expect') ?? '')) socket.write(CONTINUE);
    socket.write(SOURCE_ACCEPTED);
    const { playLog } = options.submission.deps;
    runSourceSession(socket, head, mount, rest, {
      submit,
      logger,
      ...(playLog ? { disconnected: (channel: string) => playLog.end(channel, 'source_disconnect') } : {}),
    });
  };

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(idleTimeoutMs, () => socket.destroy());
    readHead(socket, idleTimeoutMs, (head, rest) => route(socket, head, rest));
  });
  server.maxConnections = options.maxConnections ?? 64;
  await listen(server, options.port, options.host);
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | null = null;
  return {
    port,
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

/**
 * Collects the request head (at most MAX_HEAD_BYTES, within `deadlineMs` in all: a byte now and
 * then does not hold a connection slot), then hands over the head and the bytes after it.
 */
function readHead(socket: Socket, deadlineMs: number, then: (head: RequestHead, rest: Buffer) => void): void {
  let received = Buffer.alloc(0);
  const deadline = setTimeout(() => socket.destroy(), deadlineMs);
  const onData = (piece: Buffer) => {
    received = Buffer.concat([received, piece]);
    const end = endOfHead(received);
    if (end === -1) {
      if (received.length > MAX_HEAD_BYTES) finish(() => socket.end(badRequest('Request head too large')));
      return;
    }
    const head = end <= MAX_HEAD_BYTES ? parseRequestHead(received.subarray(0, end)) : null;
    const rest = Buffer.from(received.subarray(end));
    finish(() => (head ? then(head, rest) : socket.end(badRequest('Malformed request'))));
  };
  const finish = (next: () => void) => {
    clearTimeout(deadline);
    socket.off('data', onData);
    next();
  };
  socket.on('data', onData);
  socket.once('close', () => clearTimeout(deadline));
}

function listen(server: net.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) =>
      reject(
        new StartupError(
          `cannot listen for Icecast sources on ${host}:${port}: ${error.code === 'EADDRINUSE' ? 'the port is already in use (choose another with --icecast-port)' : error.message}`,
        ),
      );
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

export type { SubmissionPort, SubmitFields };
