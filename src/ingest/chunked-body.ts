// `Transfer-Encoding: chunked` (RFC 9112 section 7.1), as a PUT from curl or a library sends an
// endless body. Icecast 2.4 reads such a body raw; svc takes the chunks apart so the Ogg reader
// sees the stream itself. Pure, and bounded: a size line longer than 1 KiB is refused.

const MAX_LINE_BYTES = 1024;

type State =
  | { kind: 'size'; line: number[] }
  | { kind: 'data'; remaining: number }
  | { kind: 'data-end'; seen: number }
  | { kind: 'trailer'; line: number[] }
  | { kind: 'done' };

export class ChunkedBodyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChunkedBodyError';
  }
}

export class ChunkedDecoder {
  private state: State = { kind: 'size', line: [] };

  get finished(): boolean {
    return this.state.kind === 'done';
  }

  /** The body bytes in this piece of the wire. */
  push(piece: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let at = 0;
    while (at < piece.length && this.state.kind !== 'done') {
      const state = this.state;
      if (state.kind === 'data') {
        const taken = Math.min(state.remaining, piece.length - at);
        out.push(piece.subarray(at, at + taken));
        at += taken;
        this.state = state.remaining === taken ? { kind: 'data-end', seen: 0 } : { kind: 'data', remaining: state.remaining - taken };
        continue;
      }
      const byte = piece[at++] ?? 0;
      if (state.kind === 'data-end') {
        // CRLF after the data; a bare LF is tolerated.
        if (byte === 0x0a) this.state = { kind: 'size', line: [] };
        else if (byte !== 0x0d || state.seen > 0) throw new ChunkedBodyError('chunk data not followed by CRLF');
        else state.seen++;
        continue;
      }
      if (state.kind === 'size' || state.kind === 'trailer') this.readLine(state, byte);
    }
    return out;
  }

  private readLine(state: Extract<State, { kind: 'size' | 'trailer' }>, byte: number): void {
    if (byte !== 0x0a) {
      if (state.line.length >= MAX_LINE_BYTES) throw new ChunkedBodyError('chunk line too long');
      state.line.push(byte);
      return;
    }
    const line = Buffer.from(state.line).toString('latin1').replace(/\r$/, '');
    if (state.kind === 'trailer') {
      this.state = line === '' ? { kind: 'done' } : { kind: 'trailer', line: [] };
      return;
    }
    const sizeText = line.split(';')[0]?.trim() ?? '';
    if (!/^[0-9A-Fa-f]{1,8}$/.test(sizeText)) throw new ChunkedBodyError('invalid chunk size');
    const size = parseInt(sizeText, 16);
    this.state = size === 0 ? { kind: 'trailer', line: [] } : { kind: 'data', remaining: size };
  }
}
