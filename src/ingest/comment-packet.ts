import type { ByteBudget } from './byte-budget';
import { OggStreamError } from './ogg-pages';

// The comment header of one logical Ogg stream, read as it arrives, never held whole: a comment
// packet may carry a picture of several megabytes (METADATA_BLOCK_PICTURE), and only the few
// short fields svc uses are kept. Pure: no I/O.
//
// The layout is the Vorbis comment of the Vorbis I specification (section 5.2.1): a vendor
// string, a count, then that many `NAME=value` strings, each after its 32-bit little-endian
// length. Three codecs put it behind their own prefix:
// - Vorbis (Vorbis I spec, section 4.2.1): packet type 3 and "vorbis";
// - Opus (RFC 7845 section 5.2): "OpusTags";
// - FLAC in Ogg (FLAC's Ogg mapping, flac.xiph.org/ogg_mapping.html): a 4-byte metadata block
//   header of type 4 (VORBIS_COMMENT), big-endian length.

export type CommentCodec = 'vorbis' | 'opus' | 'flac';

export interface CommentLimits {
  /** The whole comment packet; past it the stream is refused (an endless header). */
  maxPacketBytes: number;
  /** A value longer than this is skipped, not kept. */
  maxValueBytes: number;
  /** Values kept per name (ARTIST may repeat). */
  maxValuesPerName: number;
  /** The bytes of kept values count here while the packet is read; past it the stream is refused. */
  budget?: ByteBudget;
}

/** Names (upper case) to values, in the order they came. */
export type Comments = ReadonlyMap<string, readonly string[]>;

const PREFIX: Readonly<Record<Exclude<CommentCodec, 'flac'>, Buffer>> = {
  vorbis: Buffer.from('\x03vorbis', 'latin1'),
  opus: Buffer.from('OpusTags', 'latin1'),
};
const FLAC_VORBIS_COMMENT_BLOCK = 4;
const MAX_NAME_BYTES = 64;

/** What the reader waits for next; `fixed` bytes are collected into `small`. */
type Step =
  | { kind: 'prefix'; at: number }
  | { kind: 'flac-block-header' }
  | { kind: 'vendor-length' }
  | { kind: 'skip-vendor'; remaining: number }
  | { kind: 'count' }
  | { kind: 'comment-length' }
  | { kind: 'name'; remaining: number; name: number[] }
  | { kind: 'value'; remaining: number; name: string; kept: Buffer[] | null }
  | { kind: 'skip-comment'; remaining: number }
  | { kind: 'done' };

export class CommentPacketReader {
  private step: Step;
  private small: number[] = [];
  private total = 0;
  private commentsLeft = 0;
  private readonly comments = new Map<string, string[]>();
  /** Bytes taken from the budget, given back when the packet ends. */
  private charged = 0;

  constructor(
    private readonly codec: CommentCodec,
    private readonly limits: CommentLimits,
    private readonly wanted: (name: string) => boolean,
  ) {
    this.step = codec === 'flac' ? { kind: 'flac-block-header' } : { kind: 'prefix', at: 0 };
  }

  /** The next piece of the comment packet. Throws OggStreamError on a malformed or endless one. */
  push(piece: Uint8Array): void {
    this.total += piece.length;
    if (this.total > this.limits.maxPacketBytes) throw new OggStreamError(`comment header over ${this.limits.maxPacketBytes} bytes`);
    let at = 0;
    while (at < piece.length && this.step.kind !== 'done') at = this.consume(piece, at);
  }

  /** The packet has ended: the comments read. */
  finish(): Comments {
    this.limits.budget?.give(this.charged);
    this.charged = 0;
    return this.comments;
  }

  /** Consumes bytes from `at` for the current step; returns where it stopped. */
  private consume(piece: Uint8Array, at: number): number {
    const step = this.step;
    switch (step.kind) {
      case 'prefix': {
        const expected = PREFIX[this.codec as Exclude<CommentCodec, 'flac'>];
        if (piece[at] !== expected[step.at]) throw new OggStreamError(`not a ${this.codec} comment header`);
        this.step = step.at + 1 === expected.length ? { kind: 'vendor-length' } : { kind: 'prefix', at: step.at + 1 };
        return at + 1;
      }
      case 'flac-block-header':
        return this.fixed(piece, at, 4, (bytes) => {
          if (((bytes[0] ?? 0) & 0x7f) !== FLAC_VORBIS_COMMENT_BLOCK) throw new OggStreamError('FLAC header without a VORBIS_COMMENT block');
          this.step = { kind: 'vendor-length' };
        });
      case 'vendor-length':
        return this.fixed(piece, at, 4, (bytes) => (this.step = { kind: 'skip-vendor', remaining: littleEndian(bytes) }));
      case 'skip-vendor':
      case 'skip-comment': {
        const taken = Math.min(step.remaining, piece.length - at);
        const remaining = step.remaining - taken;
        if (remaining > 0) this.step = { ...step, remaining };
        else this.step = step.kind === 'skip-vendor' ? { kind: 'count' } : this.nextComment();
        return at + taken;
      }
      case 'count':
        return this.fixed(piece, at, 4, (bytes) => {
          this.commentsLeft = littleEndian(bytes);
          this.step = this.nextComment(false);
        });
      case 'comment-length':
        return this.fixed(piece, at, 4, (bytes) => (this.step = { kind: 'name', remaining: littleEndian(bytes), name: [] }));
      case 'name':
        return this.readName(step, piece, at);
      case 'value':
        return this.readValue(step, piece, at);
      case 'done':
        return piece.length;
    }
  }

  private readName(step: Extract<Step, { kind: 'name' }>, piece: Uint8Array, at: number): number {
    let index = at;
    while (index < piece.length && step.remaining > 0) {
      const byte = piece[index++] ?? 0;
      step.remaining--;
      if (byte === 0x3d /* = */) {
        const name = Buffer.from(step.name).toString('latin1').toUpperCase();
        const keep = this.wanted(name) && step.remaining <= this.limits.maxValueBytes && (this.comments.get(name)?.length ?? 0) < this.limits.maxValuesPerName;
        this.step = { kind: 'value', remaining: step.remaining, name, kept: keep ? [] : null };
        if (step.remaining === 0) this.endValue(this.step);
        return index;
      }
      if (step.name.length >= MAX_NAME_BYTES) {
        this.step = { kind: 'skip-comment', remaining: step.remaining };
        return index;
      }
      step.name.push(byte);
    }
    // A comment without "=" is not a field (Vorbis I spec 5.2.3): it is passed over.
    if (step.remaining === 0) this.step = this.nextComment();
    return index;
  }

  private readValue(step: Extract<Step, { kind: 'value' }>, piece: Uint8Array, at: number): number {
    const taken = Math.min(step.remaining, piece.length - at);
    if (step.kept) this.charge(taken);
    step.kept?.push(Buffer.from(piece.subarray(at, at + taken)));
    step.remaining -= taken;
    if (step.remaining === 0) this.endValue(step);
    return at + taken;
  }

  private endValue(step: Extract<Step, { kind: 'value' }>): void {
    if (step.kept) {
      const values = this.comments.get(step.name) ?? [];
      values.push(Buffer.concat(step.kept).toString('utf8'));
      this.comments.set(step.name, values);
    }
    this.step = this.nextComment();
  }

  private charge(bytes: number): void {
    const budget = this.limits.budget;
    if (!budget) return;
    const outcome = budget.take(bytes);
    if (outcome === 'own') throw new OggStreamError(`comment data over this source's memory budget (${budget.maxBytes} bytes)`);
    if (outcome === 'shared') throw new OggStreamError('comment data over the memory budget all sources share');
    this.charged += bytes;
  }

  private nextComment(countOne = true): Step {
    if (countOne) this.commentsLeft--;
    return this.commentsLeft > 0 ? { kind: 'comment-length' } : { kind: 'done' };
  }

  /** Collects `size` bytes (across pieces) and hands them over once all have come. */
  private fixed(piece: Uint8Array, at: number, size: number, then: (bytes: number[]) => void): number {
    let index = at;
    while (index < piece.length && this.small.length < size) this.small.push(piece[index++] ?? 0);
    if (this.small.length === size) {
      const bytes = this.small;
      this.small = [];
      then(bytes);
    }
    return index;
  }
}

function littleEndian(bytes: readonly number[]): number {
  return ((bytes[0] ?? 0) | ((bytes[1] ?? 0) << 8) | ((bytes[2] ?? 0) << 16)) + (bytes[3] ?? 0) * 0x1000000;
}
