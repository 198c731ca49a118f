import net, { type AddressInfo, type Socket } from 'node:net';
import { StartupError } from '../errors';
import type { Logger } from '../log';
import { throttledLog } from '../log';
import { AuthThrottle } from '../domain/auth-throttle';
import { sleep } from '../signals';
import { basicPassword } from '../pipeline/icecast-credentials';
import { ByteBudget } from './byte-budget';
import { runSourceSession, type AudioTap } from './source-session';
import {
  CONTINUE,
  MAX_HEAD_BYTES,
  SOURCE_ACCEPTED,
  authenticationRequired,
  badRequest,
  browserRefused,
  endOfHead,
  isFromBrowser,
  mountInUse,
  normalizeMount,
  notFound,
  parseRequestHead,
  tooManyAttempts,
  type RequestHead,
} from './source-protocol';
import type { SubmitFields } from './submitter';
import { answerTitleUpdate, passwordAccepted, type PasswordCheck } from './title-update';

// The second entry point beside the HTTP API (docs/dj-software.md): a listener that DJ software
// takes for an Icecast 2.4 server. A raw TCP server, not node:http: a SOURCE request (HTTP/1.0,
// no Content-Length) is followed by an endless body that an HTTP parser would read as the next
// request. One request per connection, answered HTTP/1.0 with Connection: Close, as Icecast does.

export interface IcecastListenerOptions {
  host: string;
  port: number;
  /** Sources and title updates give it; never empty (docs/security.md "Icecast sources"). */
  password: string;
  /** The one thing the listener asks of the rest of svc: store and announce a track's fields. */
  submit: SubmitFields;
  /** A source left its mount: the play on that channel ends (docs/play-log.md "Air times"). */
  sourceGone?: (channel: string) => Promise<unknown>;
  /** Where each source's audio goes: the recognition (docs/recognition.md "Listening"). */
  audio?: AudioTap;
  logger: Logger;
  /** Silence before the request head is complete, and from a connected source (Icecast's source-timeout is 10 s). */
  idleTimeoutMs?: number;
  maxConnections?: number;
  /** Connections one address may hold on this port (DJ software needs one or two). */
  maxConnectionsPerAddress?: number;
  /** What one source may hold while it reads comment headers, and all sources together. */
  sourceMemoryBytes?: number;
  totalSourceMemoryBytes?: number;
  /** Failed passwords per address, shared with the HTTP API (docs/security.md "Guessing the secret"). */
  authentication?: { throttle: AuthThrottle; report: (door: string, address: string, failures: number, delayMs: number) => void };
}

export interface RunningIcecastListener {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** How long an answered connection may still send before it is closed (a client that never closes). */
const LINGER_MS = 2000;

export async function startIcecastListener(options: IcecastListenerOptions): Promise<RunningIcecastListener> {
  const { logger, password } = options;
  if (password === '') {
    throw new StartupError('icecastSource.port needs a password: set icecastSource.password or a secret (without one any web page could set the track)');
  }
  const submit = options.submit;
  const mounts = new Set<string>();
  const sockets = new Set<Socket>();
  const report = throttledLog((message) => logger.warn(message));
  const idleTimeoutMs = options.idleTimeoutMs ?? 10_000;
  const sourcesBudget = new ByteBudget(options.totalSourceMemoryBytes ?? 8 * 1024 * 1024);
  const sourceMemoryBytes = options.sourceMemoryBytes ?? 256 * 1024;
  const checkPassword = passwordCheck(password, options.authentication ?? { throttle: new AuthThrottle(), report: logFailedPassword(logger) });
  // A source that goes away ends the play on its mount's channel (docs/play-log.md "Air times").
  const sourceGone = options.sourceGone;
  const ended = sourceGone ? { disconnected: (channel: string) => sourceGone(channel) } : {};
  const sessionDeps = { submit, logger, report, ...ended, ...(options.audio ? { audio: options.audio } : {}) };

  const route = (socket: Socket, head: RequestHead, rest: Buffer) => {
    const from = socket.remoteAddress ?? 'unknown';
    if (isFromBrowser(head)) {
      report('browser', `icecast listener: a request from a browser (${from}) refused`);
      answerAndClose(socket, browserRefused());
      return;
    }
    if (head.method === 'SOURCE' || head.method === 'PUT') {
      void acceptSource(socket, head, rest, from);
      return;
    }
    if (head.method === 'GET' && (head.path === '/admin/metadata' || head.path === '/admin/metadata.xsl' || head.path === '/admin.cgi')) {
      const kind = head.path === '/admin.cgi' ? 'shoutcast' : 'icecast';
      // The answer waits for the submission (at most processingTimeoutSeconds), not for the client.
      socket.setTimeout(0);
      void answerTitleUpdate(kind, head, from, { checkPassword, submit, logger }).then((answer) => answerAndClose(socket, answer));
      return;
    }
    // Icecast 2.4.4 closes without a word on other methods; libshout's TLS probe (`OPTIONS *` with
    // `Upgrade: TLS/1.0`) reads that as "no TLS here" and goes on in plain HTTP.
    if (head.method !== 'GET') {
      answerAndClose(socket, '');
      return;
    }
    // libshout asks `GET /admin/!POKE` next; Icecast's answer is this 400, and libshout goes on.
    if (head.path.startsWith('/admin')) answerAndClose(socket, badRequest('Unrecognised command'));
    else answerAndClose(socket, notFound('svc takes sources here; listeners are not served'));
  };

  const acceptSource = async (socket: Socket, head: RequestHead, rest: Buffer, from: string) => {
    const given = basicPassword(head.headers.get('authorization'));
    const verdict = await checkPassword(given, from, `the Icecast port (${head.method})`);
    if (socket.destroyed) return;
    if (verdict !== 'accepted') {
      answerAndClose(socket, typeof verdict === 'number' ? tooManyAttempts(verdict) : authenticationRequired());
      return;
    }
    const mount = normalizeMount(head.path);
    if (mount === null) {
      answerAndClose(socket, badRequest('Invalid mountpoint'));
      return;
    }
    // An empty body is a probe (libshout's challenge without a password to ask): yes, and no mount taken.
    if (head.headers.get('content-length') === '0') {
      answerAndClose(socket, SOURCE_ACCEPTED);
      return;
    }
    if (mounts.has(mount)) {
      report(`mount-in-use`, `icecast listener: source from ${from} refused: mountpoint ${mount} in use`);
      answerAndClose(socket, mountInUse());
      return;
    }
    mounts.add(mount);
    const budget = sourcesBudget.child(sourceMemoryBytes);
    socket.once('close', () => {
      mounts.delete(mount);
      budget.release();
    });
    if (/100-continue/i.test(head.headers.get('expect') ?? '')) socket.write(CONTINUE);
    socket.write(SOURCE_ACCEPTED);
    runSourceSession(socket, head, mount, rest, { ...sessionDeps, budget });
  };

  const admitFromAddress = perAddressCap(options.maxConnectionsPerAddress ?? 8, report);
  const withinTotal = totalCap(options.maxConnections ?? 64, report);
  const server = net.createServer((socket) => {
    if (!admitFromAddress(socket) || !withinTotal.admit(socket)) return;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(idleTimeoutMs, () => socket.destroy());
    readHead(socket, idleTimeoutMs, (head, rest) => {
      withinTotal.headRead(socket);
      route(socket, head, rest);
    });
  });
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

/** The answer goes out, the rest of what the client sends is dropped, and the socket goes within LINGER_MS. */
function answerAndClose(socket: Socket, answer: string): void {
  socket.setTimeout(LINGER_MS, () => socket.destroy());
  socket.on('data', () => undefined);
  socket.resume();
  socket.end(answer);
}

/** At most `cap` connections from one address; past it a connection is closed at once (0: no cap). */
function perAddressCap(cap: number, report: (kind: string, message: string) => void): (socket: Socket) => boolean {
  const perAddress = new Map<string, number>();
  return (socket) => {
    const address = socket.remoteAddress ?? '';
    const held = perAddress.get(address) ?? 0;
    if (cap > 0 && held >= cap) {
      report('per-address', `icecast listener: connection from ${address} refused: ${held} connections open from it`);
      socket.destroy();
      return false;
    }
    perAddress.set(address, held + 1);
    socket.once('close', () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    return true;
  };
}

/**
 * At most `cap` connections. At the cap, the oldest connection still sending its request head,
 * of the address holding the most such connections, is closed to make room: half-open updates
 * from a few addresses cannot keep the DJ's software out (docs/security.md "Icecast sources").
 * Only when every connection has sent its head is a new one closed.
 */
function totalCap(cap: number, report: (kind: string, message: string) => void): { admit(socket: Socket): boolean; headRead(socket: Socket): void } {
  // Connections still sending their head, per address, oldest first.
  const halfOpen = new Map<string, Set<Socket>>();
  let open = 0;
  const headRead = (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const waiting = halfOpen.get(address);
    waiting?.delete(socket);
    if (waiting?.size === 0) halfOpen.delete(address);
  };
  const evictHalfOpen = (): boolean => {
    let busiest: Set<Socket> | undefined;
    for (const waiting of halfOpen.values()) if (!busiest || waiting.size > busiest.size) busiest = waiting;
    const oldest = busiest?.values().next().value;
    if (!oldest) return false;
    report('evicted', `icecast listener: closed the oldest half-open connection of ${oldest.remoteAddress ?? ''}: ${open} connections open`);
    headRead(oldest);
    oldest.destroy();
    return true;
  };
  return {
    admit(socket) {
      if (open >= cap && !evictHalfOpen()) {
        report('total', `icecast listener: connection from ${socket.remoteAddress ?? ''} refused: ${open} connections open`);
        socket.destroy();
        return false;
      }
      open += 1;
      const address = socket.remoteAddress ?? '';
      const waiting = halfOpen.get(address) ?? new Set<Socket>();
      waiting.add(socket);
      halfOpen.set(address, waiting);
      socket.once('close', () => {
        open -= 1;
        headRead(socket);
      });
      return true;
    },
    headRead,
  };
}

/**
 * The password check of every door of this port: an address that gave wrong passwords waits its
 * turn (AuthThrottle), and a right one clears it. No password given at all (libshout's first,
 * challenge request) is no guess. Answers 'accepted', 'refused', or the seconds to wait.
 */
function passwordCheck(password: string, authentication: NonNullable<IcecastListenerOptions['authentication']>): PasswordCheck {
  const { throttle, report } = authentication;
  return async (given, from, door) => {
    if (given === null || given === undefined) return 'refused';
    const turn = throttle.turn(from);
    if ('refusedForMs' in turn) return Math.ceil(turn.refusedForMs / 1000);
    if (turn.waitMs > 0) await sleep(turn.waitMs);
    if (passwordAccepted(given, password)) {
      throttle.succeeded(from);
      return 'accepted';
    }
    const { failures, delayMs } = throttle.failed(from);
    report(door, from, failures, delayMs);
    return 'refused';
  };
}

function logFailedPassword(logger: Logger): (door: string, address: string, failures: number, delayMs: number) => void {
  const report = throttledLog((message) => logger.warn(message));
  return (door, address, failures, delayMs) =>
    report(
      `failed-authentication ${door} ${address}`,
      `failed authentication on ${door} from ${address}: ${failures} in a row from it; its next attempt waits ${delayMs} ms`,
    );
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
      if (received.length > MAX_HEAD_BYTES) finish(() => answerAndClose(socket, badRequest('Request head too large')));
      return;
    }
    const head = end <= MAX_HEAD_BYTES ? parseRequestHead(received.subarray(0, end)) : null;
    const rest = Buffer.from(received.subarray(end));
    finish(() => (head ? then(head, rest) : answerAndClose(socket, badRequest('Malformed request'))));
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

export type { AudioTap, SubmitFields };
