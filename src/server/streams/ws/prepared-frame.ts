import { WebSocket } from 'ws';

// Frame once, write many (docs/limits-and-load.md "Frame once, write many"): a pushed frame is the
// same bytes for every socket of a stream (server frames are never masked, RFC 6455 5.1), so it is
// framed once with `ws`'s own framing (Sender.frame, ws/lib/sender.js) and that one Buffer is
// written to each socket's TCP stream, where `ws` itself would write it. Pure.

/** Sender.frame's options (ws/lib/sender.js); @types/ws does not declare the Sender class. */
interface FrameOptions {
  fin: boolean;
  opcode: number;
  mask: boolean;
  readOnly: boolean;
  rsv1: boolean;
}

const Sender = (WebSocket as unknown as { Sender: { frame(data: Buffer, options: FrameOptions): Buffer[] } }).Sender;
const OPCODE_TEXT = 0x1;

/** One whole, unmasked text frame carrying `text`: header and payload in one Buffer. */
export function prepareTextFrame(text: string): Buffer {
  const parts = Sender.frame(Buffer.from(text), { fin: true, opcode: OPCODE_TEXT, mask: false, readOnly: false, rsv1: false });
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}
