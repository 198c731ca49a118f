import { pageChecksum } from '../../src/ingest/ogg-pages';

// Hand-made Ogg pages (RFC 3533 section 6) for cases no encoder writes: a comment header that
// never ends, a packet cut at an awkward place. The checksum is the reader's own, which the
// tests on real oggenc/opusenc/flac files check against real pages.

export function oggPage(options: { serial: number; sequence: number; headerType: number; segments: readonly Buffer[]; lastContinues?: boolean }): Buffer {
  const lacing: number[] = [];
  options.segments.forEach((segment, index) => {
    let left = segment.length;
    while (left >= 255) {
      lacing.push(255);
      left -= 255;
    }
    // A packet that goes on in the next page has no closing lacing value below 255.
    const continues = index === options.segments.length - 1 && options.lastContinues === true;
    if (continues && left !== 0) throw new Error('a packet that continues fills its page with 255-byte segments');
    if (!continues) lacing.push(left);
  });
  const header = Buffer.alloc(27 + lacing.length);
  header.write('OggS', 0, 'latin1');
  header[4] = 0;
  header[5] = options.headerType;
  header.writeBigInt64LE(0n, 6);
  header.writeUInt32LE(options.serial, 14);
  header.writeUInt32LE(options.sequence, 18);
  header[26] = lacing.length;
  Buffer.from(lacing).copy(header, 27);
  const page = Buffer.concat([header, ...options.segments]);
  page.writeUInt32LE(pageChecksum(page), 22);
  return page;
}

/** A Vorbis comment packet body: vendor, then each `NAME=value`. */
export function vorbisCommentPacket(prefix: Buffer, comments: readonly string[]): Buffer {
  const parts: Buffer[] = [prefix, u32(6), Buffer.from('tester'), u32(comments.length)];
  for (const comment of comments) {
    const bytes = Buffer.from(comment, 'utf8');
    parts.push(u32(bytes.length), bytes);
  }
  return Buffer.concat(parts);
}

export const VORBIS_ID_PACKET = Buffer.concat([Buffer.from('\x01vorbis', 'latin1'), Buffer.alloc(23)]);
export const VORBIS_COMMENT_PREFIX = Buffer.from('\x03vorbis', 'latin1');

function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(value);
  return buffer;
}
