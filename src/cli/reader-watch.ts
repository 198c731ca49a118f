import fs from 'node:fs';

// Notices that the reader of a pipe went away (`svc last --follow | head -n 1`) while we have
// nothing to write, as GNU `tail -f` does with poll(2). A write would tell (EPIPE), but there may
// be no data for minutes, and a zero-length write to a pipe succeeds whether or not anyone reads
// (Linux fs/pipe.c returns early for an empty write). Node has no poll(2) of its own; its WASI
// does: `poll_oneoff` on a descriptor for writing runs libuv's uv_poll, which reports the
// kernel's POLLERR, set on a pipe's write end once it has no reader, as an event error (uvwasi
// src/poll_oneoff.c; libuv src/unix/poll.c); a socket whose peer closed (Node's own `stdio:
// 'pipe'`) reports a hang-up flag instead. The module below only imports and re-exports that
// one function, and its memory, so the caller can fill in the structures.

const CHECK_EVERY_MS = 250;
/** How long one check may wait when the pipe is full (the reader is alive but slow). */
const CHECK_TIMEOUT_NS = 1_000_000n;

// WASI preview1 layouts (WebAssembly/WASI legacy/preview1/witx/typenames.witx).
const SUBSCRIPTION_SIZE = 48;
const EVENT_SIZE = 32;
const EVENTTYPE_CLOCK = 0;
const EVENTTYPE_FD_WRITE = 2;
const CLOCKID_MONOTONIC = 1;
const FD_USERDATA = 1n;
const SUBSCRIPTIONS_AT = 0;
const EVENTS_AT = 128;
const EVENT_COUNT_AT = 256;
const ERRNO_SUCCESS = 0;
const EVENTRWFLAGS_HANGUP = 1;

type PollOneoff = (subscriptions: number, events: number, count: number, eventCount: number) => number;

// The few WebAssembly globals used here; the project's TypeScript libs (no DOM) do not declare them.
interface WasmGlobals {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}

/** Bytes of a WebAssembly module that imports wasi_snapshot_preview1.poll_oneoff and exports it. */
function pollModuleBytes(): Uint8Array {
  const name = (text: string) => [text.length, ...Buffer.from(text, 'latin1')];
  const section = (id: number, body: number[]) => [id, body.length, ...body];
  const I32 = 0x7f;
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
    ...section(1, [1, 0x60, 4, I32, I32, I32, I32, 1, I32]), // type 0: (i32 x4) -> i32
    ...section(2, [1, ...name('wasi_snapshot_preview1'), ...name('poll_oneoff'), 0x00, 0]), // import func, type 0
    ...section(5, [1, 0x00, 1]), // one memory of one page
    ...section(7, [2, ...name('memory'), 0x02, 0, ...name('poll_oneoff'), 0x00, 0]), // export both
  ]);
}

/** A check for "the reader of `fd` has gone", or null when this Node cannot poll. */
function createReaderGoneCheck(fd: number): (() => boolean) | null {
  let poll: PollOneoff;
  let memory: WasmMemory;
  try {
    // WASI prints an ExperimentalWarning on stderr when constructed; stderr is for our diagnostics.
    const emitWarning = Object.getOwnPropertyDescriptor(process, 'emitWarning');
    process.emitWarning = () => undefined;
    let wasi;
    try {
      const { WASI } = require('node:wasi') as typeof import('node:wasi');
      wasi = new WASI({ version: 'preview1', stdout: fd, returnOnExit: true });
    } finally {
      if (emitWarning) Object.defineProperty(process, 'emitWarning', emitWarning);
    }
    const wasm = (globalThis as unknown as { WebAssembly: WasmGlobals }).WebAssembly;
    const instance = new wasm.Instance(new wasm.Module(pollModuleBytes()), wasi.getImportObject());
    wasi.initialize(instance);
    poll = instance.exports.poll_oneoff as PollOneoff;
    memory = instance.exports.memory as WasmMemory;
  } catch {
    return null;
  }
  const WASI_STDOUT = 1; // the descriptor passed as `stdout` above, as WASI numbers it

  return () => {
    const view = new DataView(memory.buffer);
    new Uint8Array(memory.buffer, 0, EVENT_COUNT_AT + 4).fill(0);
    // Subscription 0: "fd can be written".
    view.setBigUint64(SUBSCRIPTIONS_AT, FD_USERDATA, true);
    view.setUint8(SUBSCRIPTIONS_AT + 8, EVENTTYPE_FD_WRITE);
    view.setUint32(SUBSCRIPTIONS_AT + 16, WASI_STDOUT, true);
    // Subscription 1: a short timeout, so a full pipe never blocks us for long.
    const clock = SUBSCRIPTIONS_AT + SUBSCRIPTION_SIZE;
    view.setUint8(clock + 8, EVENTTYPE_CLOCK);
    view.setUint32(clock + 16, CLOCKID_MONOTONIC, true);
    view.setBigUint64(clock + 24, CHECK_TIMEOUT_NS, true);
    if (poll(SUBSCRIPTIONS_AT, EVENTS_AT, 2, EVENT_COUNT_AT) !== ERRNO_SUCCESS) return false;
    const count = view.getUint32(EVENT_COUNT_AT, true);
    for (let i = 0; i < count; i++) {
      const event = EVENTS_AT + i * EVENT_SIZE;
      if (view.getBigUint64(event, true) !== FD_USERDATA) continue;
      // A pipe without a reader reports an error (POLLERR); a socket whose peer closed, a hang-up.
      if (view.getUint16(event + 8, true) !== ERRNO_SUCCESS || (view.getUint16(event + 24, true) & EVENTRWFLAGS_HANGUP) !== 0) return true;
    }
    return false;
  };
}

/**
 * Calls `onGone` once the reader of `fd` (a pipe or socket) has gone. Checks a few times a
 * second on an unref'd timer, starting after the first interval so one-shot commands never pay
 * for it. Files and terminals have no reader to lose: nothing to do.
 */
export function watchReader(fd: number, onGone: () => void): void {
  let kind: fs.Stats;
  try {
    kind = fs.fstatSync(fd);
  } catch {
    return;
  }
  if (!kind.isFIFO() && !kind.isSocket()) return;
  let check: (() => boolean) | null | undefined;
  const timer = setInterval(() => {
    if (check === undefined) check = createReaderGoneCheck(fd);
    if (check === null) return clearInterval(timer);
    if (check()) {
      clearInterval(timer);
      onGone();
    }
  }, CHECK_EVERY_MS);
  timer.unref();
}
