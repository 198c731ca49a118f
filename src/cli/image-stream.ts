import { errorMessage } from '../errors';
import { sleep } from '../signals';
import type WebSocket from 'ws';
import { USER_AGENT, describeNetworkError, formatSeconds } from './client';
import { CliError, EXIT } from './exit-codes';

// Tails /v1/images/ws for `svc last --follow` and `svc watch-images`: frames are handed over in
// order, one at a time; when the connection drops, a note goes to stderr and the stream
// reconnects with exponential backoff until `stop` is aborted (SIGINT/SIGTERM).
// The first connection must succeed: a wrong URL fails fast with exit 4 instead of waiting.

export interface FollowOptions {
  url: URL;
  connectTimeoutMs: number;
  stop: AbortSignal;
  /** Called for each JSON frame, in order; the next frame waits for the returned promise. */
  onFrame(frame: unknown, raw: string): void | Promise<void>;
  /** A diagnostic line for stderr. */
  note(message: string): void;
  /** Where the address came from (the config file, or where none was found), named when the first connection fails. */
  configSource?: string;
  /** Runs after a reconnect, before the new connection's first frame is handed over (a catch-up). */
  onReconnected?(): Promise<void>;
}

/** The server pings every 30 s; silence this long means the connection is dead. */
const IDLE_TIMEOUT_MS = 75_000;
/** The first wait before reconnecting; it doubles after each failed attempt, up to MAX_BACKOFF_MS. */
const INITIAL_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5000;

interface Outcome {
  opened: boolean;
  /** Why the connection ended, for the note on stderr. */
  reason: string;
  /** The server answered the upgrade with an HTTP status instead of switching protocols. */
  httpStatus?: number;
}

export async function followImageStream(options: FollowOptions): Promise<void> {
  // Only the streaming commands need ws: required here, not at start-up.
  const WebSocketClass = require('ws') as typeof import('ws');
  let backoff = INITIAL_BACKOFF_MS;
  let connectedBefore = false;
  let queue: Promise<void> = Promise.resolve();
  const enqueue = (raw: string) => {
    queue = queue.then(() => handleFrame(options, raw));
  };
  const catchUp = options.onReconnected?.bind(options);

  while (!options.stop.aborted) {
    const outcome = await connectOnce(WebSocketClass, options, enqueue, () => {
      if (!connectedBefore) return;
      options.note(`reconnected to ${options.url.href}`);
      if (catchUp) queue = queue.then(() => catchUp().catch((error: unknown) => options.note(`could not catch up: ${errorMessage(error)}`)));
    });
    if (options.stop.aborted) break;
    if (!outcome.opened && !connectedBefore) throw firstConnectionError(options.url, outcome, options.configSource);
    if (outcome.opened) {
      connectedBefore = true;
      backoff = INITIAL_BACKOFF_MS;
    }
    options.note(`${outcome.reason}; reconnecting in ${formatSeconds(backoff)}`);
    try {
      await sleep(backoff, options.stop);
    } catch {
      break; // stopped while waiting
    }
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  }
}

async function handleFrame(options: FollowOptions, raw: string): Promise<void> {
  if (options.stop.aborted) return;
  let frame: unknown;
  try {
    frame = JSON.parse(raw);
  } catch {
    options.note('ignoring a frame that is not JSON');
    return;
  }
  try {
    await options.onFrame(frame, raw);
  } catch (error) {
    options.note(errorMessage(error));
  }
}

function connectOnce(WebSocketClass: typeof WebSocket, options: FollowOptions, enqueue: (raw: string) => void, onOpen: () => void): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = new WebSocketClass(options.url, {
      handshakeTimeout: options.connectTimeoutMs,
      perMessageDeflate: false,
      headers: { 'User-Agent': USER_AGENT },
    });
    let opened = false;
    let failure = '';
    let httpStatus: number | undefined;
    let idleTimer: NodeJS.Timeout | undefined;
    const armIdleTimer = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        failure = `no heartbeat from the server for ${formatSeconds(IDLE_TIMEOUT_MS)}`;
        socket.terminate();
      }, IDLE_TIMEOUT_MS);
    };
    const onStop = () => socket.terminate();
    options.stop.addEventListener('abort', onStop, { once: true });

    socket.on('open', () => {
      opened = true;
      // Ask for the push stream at once (without it svc waits 0.5 s before pushing).
      socket.send(SUBSCRIBE_MESSAGE);
      armIdleTimer();
      onOpen();
    });
    socket.on('ping', armIdleTimer);
    socket.on('message', (data, isBinary) => {
      armIdleTimer();
      if (!isBinary) enqueue(rawText(data));
    });
    socket.on('unexpected-response', (request, response) => {
      httpStatus = response.statusCode;
      failure = `the server answered HTTP ${response.statusCode} instead of opening the stream`;
      response.resume();
      request.destroy();
      socket.terminate();
    });
    socket.on('error', (error) => {
      failure ||= describeNetworkError(error);
    });
    socket.on('close', (code, reason) => {
      clearTimeout(idleTimer);
      options.stop.removeEventListener('abort', onStop);
      const why = failure || `${code}${reason.length > 0 ? ` ${reason.toString('utf8')}` : ''}`;
      resolve({
        opened,
        httpStatus,
        reason: opened ? `lost the connection to ${options.url.href} (${why})` : `cannot reach ${options.url.href}: ${why || 'closed'}`,
      });
    });
  });
}

const SUBSCRIBE_MESSAGE = JSON.stringify({ type: 'subscribe' });

function rawText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data).toString('utf8');
}

function firstConnectionError(url: URL, outcome: Outcome, configSource: string | undefined): CliError {
  if (outcome.httpStatus !== undefined) {
    return new CliError(`unexpected answer from ${url.href}: HTTP ${outcome.httpStatus} (is this an svc server?)`, EXIT.SERVER_ERROR);
  }
  const source = configSource ? `; ${configSource}` : '';
  return new CliError(`${outcome.reason} (is \`svc serve\` running there?${source})`, EXIT.UNREACHABLE);
}
