import { randomBytes } from 'node:crypto';
import net from 'node:net';

// A bare TCP socket that completes the WebSocket handshake and then does only what a test
// tells it: never answer pings, or stop reading altogether (a stuck viewer).

export interface RawWs {
  socket: net.Socket;
  /** Bytes received after the handshake, while reading. */
  received(): Buffer;
  /** Waits until the server closes the TCP connection. */
  ended: Promise<void>;
}

export function openRawWs(httpUrl: string, path = '/v1/images/ws'): Promise<RawWs> {
  const { hostname, port } = new URL(httpUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let buffer = Buffer.alloc(0);
    let upgraded = false;
    const ended = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('error', () => undefined);
    socket.on('connect', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (upgraded) return;
      const end = buffer.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = buffer.subarray(0, end).toString('latin1');
      if (!head.startsWith('HTTP/1.1 101')) {
        reject(new Error(`handshake refused: ${head.split('\r\n')[0]}`));
        return;
      }
      upgraded = true;
      buffer = buffer.subarray(end + 4);
      resolve({ socket, received: () => buffer, ended });
    });
  });
}

export interface ServerFrame {
  opcode: number;
  payload: Buffer;
}

/** Splits unmasked server-to-client frames (enough for text, ping and close). */
export function parseFrames(data: Buffer): ServerFrame[] {
  const frames: ServerFrame[] = [];
  let offset = 0;
  while (offset + 2 <= data.length) {
    const opcode = (data[offset] ?? 0) & 0x0f;
    let length = (data[offset + 1] ?? 0) & 0x7f;
    let header = 2;
    if (length === 126) {
      length = data.readUInt16BE(offset + 2);
      header = 4;
    } else if (length === 127) {
      length = Number(data.readBigUInt64BE(offset + 2));
      header = 10;
    }
    if (offset + header + length > data.length) break;
    frames.push({ opcode, payload: data.subarray(offset + header, offset + header + length) });
    offset += header + length;
  }
  return frames;
}

/** The close code of the first close frame, if any. */
export function closeCode(frames: readonly ServerFrame[]): number | undefined {
  const close = frames.find((frame) => frame.opcode === 0x8);
  return close && close.payload.length >= 2 ? close.payload.readUInt16BE(0) : undefined;
}

/** Sends one masked text frame, as every client must (RFC 6455 section 5.3). */
export function sendText(socket: net.Socket, text: string): void {
  const payload = Buffer.from(text, 'utf8');
  const mask = randomBytes(4);
  const header = payload.length < 126 ? Buffer.alloc(2) : payload.length < 65_536 ? Buffer.alloc(4) : Buffer.alloc(10);
  header[0] = 0x81; // FIN, text
  if (payload.length < 126) header[1] = 0x80 | payload.length;
  else if (payload.length < 65_536) {
    header[1] = 0x80 | 126;
    header.writeUInt16BE(payload.length, 2);
  } else {
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(payload.length), 2);
  }
  for (let i = 0; i < payload.length; i += 1) payload[i] = (payload[i] ?? 0) ^ (mask[i % 4] ?? 0);
  socket.write(Buffer.concat([header, mask, payload]));
}
