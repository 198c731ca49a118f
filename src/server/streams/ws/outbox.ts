import type { Writable } from 'node:stream';
import { WebSocket } from 'ws';

// One socket's outgoing queue (docs/decisions.md "/v1/images/ws",
// "Hostile clients": a reply is produced only as the reader takes it).
//
// Two kinds of frame share the socket, in order:
// - pushed frames (track, image): small, framed once for every socket (prepared-frame.ts) and
//   written to the TCP stream without waiting; a reader that lets more than `maxPushBytes` of
//   them pile up is closed with 1013;
// - replies to requests: produced one at a time, when the previous reply has drained. A reply
//   can be a fragmented message whose fragments are produced lazily, each only once the previous
//   one was written out, so a reader that stops reading holds one fragment, never a whole
//   base64 image. Replies never close a socket; the heartbeat drops a peer that is gone.

/** A whole message, or its fragments in order, each produced only when it is its turn; null: nothing after all. */
export type Outgoing = string | Iterable<string> | AsyncIterable<string> | null;

export type QueuedKind = 'push' | 'reply';

/**
 * The one place where a socket's queued bytes are counted: bytes handed to it and not yet
 * written out, by kind. `socketQueuedBytes` counts them per socket; `budgetedQueuedBytes`
 * (budgeted-queue.ts) also counts them in the process-wide `limits.maxQueuedBytes`.
 */
export interface QueuedBytes {
  add(kind: QueuedKind, bytes: number): void;
  remove(kind: QueuedKind, bytes: number): void;
  /** Whether `bytes` more of pushed frames may be queued for this socket. */
  pushFits(bytes: number): boolean;
  /** Unsent bytes of this socket, both kinds. */
  total(): number;
  /** The socket is gone: whatever it still held no longer counts. */
  release(): void;
}

export function socketQueuedBytes(maxPushBytes: number): QueuedBytes {
  return new SocketQueuedBytes(maxPushBytes);
}

/**
 * A class, not closures: one small object per socket (docs/limits-and-load.md "What one client
 * costs"), where ten closures and their contexts cost about a kilobyte on each of 10,000 sockets.
 */
class SocketQueuedBytes implements QueuedBytes {
  private push = 0;
  private reply = 0;
  // After release, write callbacks that still come in (with an error) change nothing.
  private released = false;

  constructor(private readonly maxPushBytes: number) {}

  add(kind: QueuedKind, bytes: number): void {
    if (this.released) return;
    if (kind === 'push') this.push += bytes;
    else this.reply += bytes;
  }

  remove(kind: QueuedKind, bytes: number): void {
    this.add(kind, -bytes);
  }

  // Replies under way do not count against the push bound: they were asked for. An empty
  // queue takes any one frame, so a single large frame never closes a reader.
  pushFits(bytes: number): boolean {
    return this.push === 0 || this.push + bytes <= this.maxPushBytes;
  }

  total(): number {
    return this.push + this.reply;
  }

  release(): void {
    this.released = true;
    this.push = 0;
    this.reply = 0;
  }
}

export interface OutboxOptions {
  /**
   * The TCP stream `ws` writes this socket's frames to (the upgrade's socket): prepared frames go
   * there directly, between `ws`'s own writes, so the order of frames holds.
   */
  wire: Writable;
  /** Counts this socket's queued bytes and decides whether a push fits (else 1013). */
  queued: QueuedBytes;
  /** Called when a reply has gone out completely (the request is no longer in flight). */
  onReplySent(): void;
  onTooSlow(unsentBytes: number): void;
  onReplyFailed(error: unknown): void;
}

/** Produces a reply; a promise when it is read from the (asynchronous) store. */
type Produce = () => Outgoing | Promise<Outgoing>;

type Item = { kind: 'push'; frame: Buffer } | { kind: 'reply'; produce: Produce } | { kind: 'close'; data: string; code: number; reason: string };

const CLOSE_INTERNAL_ERROR = 1011;
const CLOSE_TRY_AGAIN_LATER = 1013;

export class Outbox {
  private readonly queue: Item[] = [];
  /** Bytes of pushed frames queued here or in the socket, not yet written out. */
  private readonly queued: QueuedBytes;
  /** A reply is being produced or has not drained yet: the next one waits. */
  private replyBusy = false;
  /** A fragmented message is half sent: nothing else may go out until it ends. */
  private midMessage = false;
  /** Replies and reply fragments written out so far: shows a reader is still taking them. */
  private written = 0;

  constructor(
    private readonly socket: WebSocket,
    private readonly options: OutboxOptions,
  ) {
    this.queued = options.queued;
    socket.once('close', () => {
      this.queue.length = 0;
      this.queued.release();
    });
  }

  writtenFragments(): number {
    return this.written;
  }

  /**
   * Queues a pushed frame (a whole frame from prepareTextFrame, shared by every socket); closes
   * the socket with 1013 instead when its reader is too far behind.
   */
  push(frame: Buffer): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    if (!this.queued.pushFits(frame.length)) {
      this.options.onTooSlow(this.queued.total());
      this.socket.close(CLOSE_TRY_AGAIN_LATER, 'client too slow');
      return;
    }
    this.queued.add('push', frame.length);
    if (this.queue.length === 0 && !this.midMessage) {
      this.writeFrame(frame);
      return;
    }
    this.queue.push({ kind: 'push', frame });
    this.pump();
  }

  /** Queues the answer to a request; `produce` runs when the previous reply has drained. */
  reply(produce: Produce): void {
    this.queue.push({ kind: 'reply', produce });
    this.pump();
  }

  /** Sends `data` once everything queued before it is out (never inside a reply), then closes. */
  finish(data: string, code: number, reason: string): void {
    this.queue.push({ kind: 'close', data, code, reason });
    this.pump();
  }

  private pump(): void {
    while (this.queue.length > 0 && this.socket.readyState === WebSocket.OPEN) {
      const head = this.queue[0];
      if (head.kind === 'close') {
        if (this.midMessage || this.replyBusy) return;
        this.queue.length = 0;
        this.socket.send(head.data);
        this.socket.close(head.code, head.reason);
        return;
      }
      if (head.kind === 'push') {
        if (this.midMessage) return;
        this.queue.shift();
        this.writeFrame(head.frame);
        continue;
      }
      if (this.replyBusy) return;
      this.queue.shift();
      this.startReply(head.produce);
    }
  }

  /** One write of the shared frame; the bytes count as queued until the TCP stream has taken them. */
  private writeFrame(frame: Buffer): void {
    const wire = this.options.wire;
    if (!wire.writable) {
      this.queued.remove('push', frame.length);
      return;
    }
    wire.write(frame, () => this.queued.remove('push', frame.length));
  }

  private startReply(produce: Produce): void {
    this.replyBusy = true;
    let produced: Outgoing | Promise<Outgoing>;
    try {
      produced = produce();
    } catch (error) {
      this.fail(error);
      return;
    }
    if (produced instanceof Promise) {
      // Pushes queued meanwhile wait behind this reply, so frames keep the order they were queued in.
      this.midMessage = true;
      produced.then(
        (outgoing) => {
          this.midMessage = false;
          this.sendOutgoing(outgoing);
          this.pump();
        },
        (error: unknown) => this.fail(error),
      );
      return;
    }
    this.sendOutgoing(produced);
  }

  private sendOutgoing(outgoing: Outgoing): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    if (outgoing === null) {
      this.replyDone();
      return;
    }
    if (typeof outgoing === 'string') {
      this.sendCounted(outgoing, true, () => this.replyDone());
      return;
    }
    this.midMessage = true;
    this.sendFragments(Symbol.asyncIterator in outgoing ? outgoing[Symbol.asyncIterator]() : outgoing[Symbol.iterator]());
  }

  private sendFragments(fragments: Iterator<string> | AsyncIterator<string>): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    let next: IteratorResult<string> | Promise<IteratorResult<string>>;
    try {
      next = fragments.next();
    } catch (error) {
      // Half a message is out; the only honest end is to close.
      this.fail(error);
      return;
    }
    if (next instanceof Promise) {
      next.then(
        (step) => this.sendStep(fragments, step),
        (error: unknown) => this.fail(error),
      );
      return;
    }
    this.sendStep(fragments, next);
  }

  private sendStep(fragments: Iterator<string> | AsyncIterator<string>, step: IteratorResult<string>): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    if (step.done) {
      this.sendCounted('', true, () => {
        this.midMessage = false;
        this.replyDone();
      });
      return;
    }
    // The next fragment is read only once this one is written out.
    this.sendCounted(step.value, false, () => this.sendFragments(fragments));
  }

  /** Sends a reply (or a fragment of one), counted as queued until written; `then` on success. */
  private sendCounted(data: string, fin: boolean, then: () => void): void {
    const bytes = Buffer.byteLength(data);
    this.queued.add('reply', bytes);
    this.socket.send(data, { fin }, (error) => {
      this.queued.remove('reply', bytes);
      if (error) return;
      this.written += 1;
      then();
    });
  }

  private replyDone(): void {
    this.replyBusy = false;
    this.options.onReplySent();
    this.pump();
  }

  private fail(error: unknown): void {
    this.options.onReplyFailed(error);
    this.socket.close(CLOSE_INTERNAL_ERROR, 'reply failed');
  }
}
