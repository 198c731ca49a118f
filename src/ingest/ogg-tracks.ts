import { CommentPacketReader, type CommentCodec, type CommentLimits, type Comments } from './comment-packet';
import { BEGINNING_OF_STREAM, END_OF_STREAM, OggPageReader, OggStreamError, type OggPage } from './ogg-pages';

// From an Ogg byte stream to one set of comments per track. Each logical stream (RFC 3533
// section 4) begins with a page flagged "beginning of stream"; its first packet names the codec
// and its second is the comment header (Vorbis I spec section 4.2; RFC 7845 section 3; FLAC's Ogg
// mapping). A chained stream (RFC 3533 section 4, "chaining") starts a new logical stream per
// track, so every track brings its own comments. The audio packets are passed over. Pure.

export interface OggTrackOptions extends Partial<CommentLimits> {
  /** Logical streams open at once (grouping); more is not a stream svc can use. */
  maxOpenStreams?: number;
  maxSkippedBytes?: number;
  wanted: (name: string) => boolean;
}

export interface TrackComments {
  codec: CommentCodec;
  comments: Comments;
}

interface LogicalStream {
  packetIndex: number;
  /** The first bytes of the first packet: enough to tell the codec. */
  head: number[];
  comment: { codec: CommentCodec; reader: CommentPacketReader } | null;
  finished: boolean;
}

const HEAD_BYTES = 8;

export class OggTrackReader {
  private readonly pages: OggPageReader;
  private readonly streams = new Map<number, LogicalStream>();
  private readonly limits: CommentLimits;
  private readonly maxOpenStreams: number;

  constructor(private readonly options: OggTrackOptions) {
    this.pages = new OggPageReader({ maxSkippedBytes: options.maxSkippedBytes });
    this.limits = {
      maxPacketBytes: options.maxPacketBytes ?? 16 * 1024 * 1024,
      maxValueBytes: options.maxValueBytes ?? 16 * 1024,
      maxValuesPerName: options.maxValuesPerName ?? 8,
      ...(options.budget ? { budget: options.budget } : {}),
    };
    this.maxOpenStreams = options.maxOpenStreams ?? 16;
  }

  /** The comment headers this piece completes. Throws OggStreamError on a stream svc refuses. */
  push(piece: Buffer): TrackComments[] {
    const found: TrackComments[] = [];
    for (const page of this.pages.push(piece)) this.takePage(page, found);
    return found;
  }

  private takePage(page: OggPage, found: TrackComments[]): void {
    if (page.headerType & BEGINNING_OF_STREAM) {
      if (!this.streams.has(page.serial) && this.streams.size >= this.maxOpenStreams) {
        throw new OggStreamError(`more than ${this.maxOpenStreams} logical streams at once`);
      }
      this.streams.set(page.serial, { packetIndex: 0, head: [], comment: null, finished: false });
    }
    const stream = this.streams.get(page.serial);
    // A page of a stream whose start was never seen: nothing in it can be read.
    if (!stream) return;
    let offset = 0;
    for (const lacingValue of page.lacing) {
      const segment = page.body.subarray(offset, offset + lacingValue);
      offset += lacingValue;
      if (stream.finished) break;
      this.readSegment(stream, segment, lacingValue < 255, found);
    }
    if (page.headerType & END_OF_STREAM) this.streams.delete(page.serial);
  }

  private readSegment(stream: LogicalStream, segment: Buffer, endsPacket: boolean, found: TrackComments[]): void {
    if (stream.packetIndex === 0) {
      for (const byte of segment.subarray(0, HEAD_BYTES - stream.head.length)) stream.head.push(byte);
    } else {
      stream.comment?.reader.push(segment);
    }
    if (!endsPacket) return;
    if (stream.packetIndex === 0) {
      const codec = codecOf(Buffer.from(stream.head));
      // Theora, Skeleton, ...: a stream with no tags svc reads.
      if (!codec) stream.finished = true;
      else stream.comment = { codec, reader: new CommentPacketReader(codec, this.limits, this.options.wanted) };
    } else if (stream.comment) {
      found.push({ codec: stream.comment.codec, comments: stream.comment.reader.finish() });
      stream.finished = true;
    }
    stream.packetIndex++;
  }
}

/** The codec a logical stream's first packet names (its identification header). */
function codecOf(head: Buffer): CommentCodec | null {
  if (head.subarray(0, 7).equals(Buffer.from('\x01vorbis', 'latin1'))) return 'vorbis';
  if (head.subarray(0, 8).equals(Buffer.from('OpusHead', 'latin1'))) return 'opus';
  if (head.subarray(0, 5).equals(Buffer.from('\x7fFLAC', 'latin1'))) return 'flac';
  return null;
}
