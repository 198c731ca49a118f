import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import WebSocket from 'ws';
import { keyOfCoverUrl } from '../domain/image';
import { fieldText } from '../domain/track';
import type { Logger } from '../log';
import type { ImageStore } from '../store/images';
import { redactedTarget, trackDataOf, type Delivery, type Output } from './output';
import { streamTitleTemplate } from './stream-title';

// `obs` (docs/outputs.md "obs: a Text source in OBS Studio"): sets a Text source's `text` (and,
// optionally, an Image source's file to the cover) through OBS's own WebSocket server (v5,
// built into OBS 28+). The protocol: OBS says Hello (op 0) with a challenge and salt when a
// password is set; svc answers Identify (op 1) with base64(sha256(base64(sha256(password +
// salt)) + challenge)); OBS confirms with Identified (op 2) or closes with 4009 for a wrong
// password. Each change is a SetInputSettings Request (op 6) answered by a RequestResponse
// (op 7). The connection is kept and made again whenever OBS restarts; the last text sent is
// sent again then, so a restarted OBS shows the current track.

export interface ObsConfig {
  name: string;
  /** `ws://127.0.0.1:4455` */
  url: string;
  password?: string;
  /** The Text source's name. */
  input: string;
  /** An Image source whose file becomes the cover, written to `imagePath`. */
  imageInput?: string;
  imagePath?: string;
  format?: string;
}

const IDENTIFY_TIMEOUT_MS = 3000;
const FIRST_RECONNECT_MS = 500;
const MAX_RECONNECT_MS = 30_000;
/** OBS's close code for a wrong password (AuthenticationFailed). */
const CLOSE_AUTHENTICATION_FAILED = 4009;

interface Pending {
  resolve: (answer: { ok: boolean; comment: string }) => void;
}

type Settings = Record<string, string>;

/** The Identify answer to a Hello's challenge (obs-websocket's protocol, "Creating an authentication string"). */
export function obsAuthentication(password: string, salt: string, challenge: string): string {
  const secret = createHash('sha256')
    .update(password + salt)
    .digest('base64');
  return createHash('sha256')
    .update(secret + challenge)
    .digest('base64');
}

export function createObsOutput(config: ObsConfig, images: Pick<ImageStore, 'get'>, logger: Logger): Output {
  const text = streamTitleTemplate(config.format);
  const connection = new ObsConnection(config, logger);
  return {
    name: config.name,
    type: 'obs',
    feeds: { changed: 'track.changed', settled: 'track.settled', restored: 'track.deleted' },
    latestOnly: true,
    target: redactedTarget(config.url),
    async send(message, signal) {
      const track = trackDataOf(message);
      const ready = await connection.ready(signal);
      if (ready !== 'identified') return ready;
      const writes: [string, Settings][] = [[config.input, { text: text(track) }]];
      if (config.imageInput && config.imagePath) writes.push([config.imageInput, { file: await writeCover(config.imagePath, track, images) }]);
      for (const [input, settings] of writes) {
        const answer = await connection.setInputSettings(input, settings, signal);
        if (answer.outcome !== 'delivered') return answer;
      }
      return { outcome: 'delivered', receipt: `${config.input}: ${writes[0]?.[1].text ?? ''}`.slice(0, 200) };
    },
    close: () => connection.close(),
  };
}

/** Writes the track's cover to `imagePath` (write then rename); '' when it has none (the Image source shows nothing). */
async function writeCover(imagePath: string, track: Record<string, unknown>, images: Pick<ImageStore, 'get'>): Promise<string> {
  const key = keyOfCoverUrl(fieldText(track, 'coverurl') ?? '');
  const cover = key ? await images.get(key) : null;
  if (!cover) return '';
  const temporary = path.join(path.dirname(imagePath), `.${path.basename(imagePath)}.${process.pid}.tmp`);
  await fs.writeFile(temporary, cover.bytes);
  await fs.rename(temporary, imagePath);
  return imagePath;
}

/** One kept WebSocket to OBS: identified, or why not, and made again after a drop. */
class ObsConnection {
  private socket: WebSocket | undefined;
  private identified = false;
  private problem = 'connecting to OBS';
  private authFailed = false;
  private closed = false;
  private reconnectMs = FIRST_RECONNECT_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly waiting = new Set<() => void>();
  private readonly pending = new Map<string, Pending>();
  /** Sent again after a reconnect: what OBS should show. */
  private readonly lastSettings = new Map<string, Settings>();

  constructor(
    private readonly config: ObsConfig,
    private readonly logger: Logger,
  ) {
    this.connect();
  }

  /** 'identified', or the delivery that says why not (after a short wait for a connection under way). */
  async ready(signal: AbortSignal): Promise<'identified' | Delivery> {
    // A message waiting is a reason to try now rather than at the end of the backoff.
    if (!this.identified && !this.authFailed && this.socket?.readyState === WebSocket.CLOSED && !this.closed) {
      clearTimeout(this.reconnectTimer);
      this.connect();
    }
    if (!this.identified && !this.authFailed) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiting.delete(done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, IDENTIFY_TIMEOUT_MS);
        this.waiting.add(done);
        signal.addEventListener('abort', done, { once: true });
      });
    }
    if (this.identified) return 'identified';
    // A wrong password does not fix itself: the message fails and `svc outputs` says why.
    if (this.authFailed) return { outcome: 'failed', error: this.problem };
    return { outcome: 'retry', error: this.problem };
  }

  async setInputSettings(inputName: string, settings: Settings, signal: AbortSignal): Promise<Delivery> {
    this.lastSettings.set(inputName, settings);
    const answer = await this.request('SetInputSettings', { inputName, inputSettings: settings, overlay: true }, signal);
    if (answer.ok) return { outcome: 'delivered' };
    return { outcome: answer.comment === 'not connected' || answer.comment === 'timed out' ? 'retry' : 'failed', error: `OBS: ${answer.comment}` };
  }

  close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.socket?.close(1000);
    this.socket?.terminate();
    return Promise.resolve();
  }

  private request(requestType: string, requestData: Record<string, unknown>, signal: AbortSignal): Promise<{ ok: boolean; comment: string }> {
    const socket = this.socket;
    if (!socket || !this.identified) return Promise.resolve({ ok: false, comment: 'not connected' });
    const requestId = randomUUID();
    return new Promise((resolve) => {
      const finish = (answer: { ok: boolean; comment: string }) => {
        this.pending.delete(requestId);
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
      };
      const onAbort = () => finish({ ok: false, comment: 'timed out' });
      this.pending.set(requestId, { resolve: finish });
      signal.addEventListener('abort', onAbort, { once: true });
      socket.send(JSON.stringify({ op: 6, d: { requestType, requestId, requestData } }));
    });
  }

  private connect(): void {
    if (this.closed) return;
    const socket = new WebSocket(this.config.url, 'obswebsocket.json', { handshakeTimeout: 5000, maxPayload: 16 * 1024 * 1024 });
    this.socket = socket;
    socket.on('message', (data: WebSocket.RawData) => this.onMessage(socket, data));
    socket.on('error', (error: Error & { code?: string }) => {
      this.problem = error.code === 'ECONNREFUSED' ? 'not connected to OBS: connection refused' : `not connected to OBS: ${error.code ?? 'error'}`;
    });
    socket.on('close', (code: number) => this.onClose(socket, code));
  }

  private onMessage(socket: WebSocket, data: WebSocket.RawData): void {
    let message: { op?: unknown; d?: Record<string, unknown> };
    try {
      message = JSON.parse(
        Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString('utf8'),
      ) as typeof message;
    } catch {
      return;
    }
    const d = message.d ?? {};
    if (message.op === 0) this.identify(socket, d);
    else if (message.op === 2) this.onIdentified();
    else if (message.op === 7) {
      const status = (d.requestStatus ?? {}) as { result?: unknown; code?: unknown; comment?: unknown };
      const comment = typeof status.comment === 'string' ? status.comment : `request status ${String(status.code)}`;
      this.pending.get(String(d.requestId))?.resolve({ ok: status.result === true, comment });
    }
  }

  private identify(socket: WebSocket, hello: Record<string, unknown>): void {
    const auth = hello.authentication as { challenge?: unknown; salt?: unknown } | undefined;
    const identify: Record<string, unknown> = { rpcVersion: 1, eventSubscriptions: 0 };
    if (auth && typeof auth.challenge === 'string' && typeof auth.salt === 'string') {
      identify.authentication = obsAuthentication(this.config.password ?? '', auth.salt, auth.challenge);
    }
    socket.send(JSON.stringify({ op: 1, d: identify }));
  }

  private onIdentified(): void {
    const wasDown = this.problem !== 'connecting to OBS';
    this.identified = true;
    this.authFailed = false;
    this.reconnectMs = FIRST_RECONNECT_MS;
    if (wasDown) this.logger.info(`output ${this.config.name}: connected to OBS`);
    // A restarted OBS may show an old text: what it should show goes again.
    for (const [inputName, settings] of this.lastSettings) {
      this.socket?.send(
        JSON.stringify({
          op: 6,
          d: { requestType: 'SetInputSettings', requestId: randomUUID(), requestData: { inputName, inputSettings: settings, overlay: true } },
        }),
      );
    }
    for (const wake of [...this.waiting]) wake();
  }

  private onClose(socket: WebSocket, code: number): void {
    if (socket !== this.socket) return;
    const wasIdentified = this.identified;
    this.identified = false;
    for (const pending of [...this.pending.values()]) pending.resolve({ ok: false, comment: 'not connected' });
    if (code === CLOSE_AUTHENTICATION_FAILED) {
      this.authFailed = true;
      this.problem = 'OBS refused the password (close code 4009): check the obs output password against OBS, Tools, WebSocket Server Settings';
    } else if (wasIdentified || this.problem === 'connecting to OBS') {
      this.problem = code === 1006 || code === 1001 ? 'not connected to OBS: OBS closed or restarted' : `not connected to OBS: closed (code ${code})`;
    }
    if (wasIdentified) this.logger.warn(`output ${this.config.name}: ${this.problem}`);
    for (const wake of [...this.waiting]) wake();
    if (this.closed) return;
    this.reconnectTimer = setTimeout(() => this.connect(), this.reconnectMs);
    this.reconnectTimer.unref();
    this.reconnectMs = Math.min(this.reconnectMs * 2, MAX_RECONNECT_MS);
  }
}
