// Ogg pages (RFC 3533 section 6) read from a byte stream that arrives in pieces of any size.
// Pure: no I/O. Memory is bounded by the largest legal page (27 + 255 + 255 * 255 bytes) plus
// one arriving piece; bytes that are not a page are skipped within a budget, then refused.

const CAPTURE = Buffer.from('OggS', 'latin1');
const HEADER_BYTES = 27;
/** Header flags (RFC 3533 section 6, header_type_flag). */
export const CONTINUED = 0x01;
export const BEGINNING_OF_STREAM = 0x02;
export const END_OF_STREAM = 0x04;

export interface OggPage {
  headerType: number;
  serial: number;
  /** The lacing values: a value below 255 ends a packet (RFC 3533 section 5). */
  lacing: Uint8Array;
  body: Buffer;
}

/** The stream is not Ogg (or no longer is): the reader refuses to go on. */
export class OggStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OggStreamError';
  }
}

export interface PageReaderOptions {
  /** Bytes that are not part of a valid page tolerated in a row before the stream is refused. */
  maxSkippedBytes?: number;
}

export class OggPageReader {
  private pending: Buffer = Buffer.alloc(0);
  private skipped = 0;
  private readonly maxSkippedBytes: number;

  constructor(options: PageReaderOptions = {}) {
    this.maxSkippedBytes = options.maxSkippedBytes ?? 65_536;
  }

  /** The pages completed by this piece, in order. Throws OggStreamError past the skip budget. */
  push(piece: Buffer): OggPage[] {
    const data = this.pending.length === 0 ? piece : Buffer.concat([this.pending, piece]);
    const pages: OggPage[] = [];
    let at = 0;
    for (;;) {
      const found = data.indexOf(CAPTURE, at);
      if (found === -1) {
        // Keep the last 3 bytes: they may be the start of a capture pattern cut in two.
        const keepFrom = Math.max(at, data.length - (CAPTURE.length - 1));
        this.skip(keepFrom - at);
        at = keepFrom;
        break;
      }
      this.skip(found - at);
      at = found;
      const page = readPage(data, at);
      if (page === 'incomplete') break;
      if (page === 'invalid') {
        this.skip(1);
        at += 1;
        continue;
      }
      pages.push(page.page);
      this.skipped = 0;
      at += page.length;
    }
    // A copy: a slice would keep the whole arrived piece alive.
    this.pending = Buffer.from(data.subarray(at));
    return pages;
  }

  private skip(count: number): void {
    this.skipped += count;
    if (this.skipped > this.maxSkippedBytes) {
      throw new OggStreamError(`no Ogg page in ${this.skipped} bytes`);
    }
  }
}

type PageRead = { page: OggPage; length: number } | 'incomplete' | 'invalid';

function readPage(data: Buffer, at: number): PageRead {
  if (data.length - at < HEADER_BYTES) return 'incomplete';
  if (data[at + 4] !== 0) return 'invalid'; // stream_structure_version is 0
  const segmentCount = data[at + 26] ?? 0;
  const headerLength = HEADER_BYTES + segmentCount;
  if (data.length - at < headerLength) return 'incomplete';
  const lacing = data.subarray(at + HEADER_BYTES, at + headerLength);
  let bodyLength = 0;
  for (const value of lacing) bodyLength += value;
  const length = headerLength + bodyLength;
  if (data.length - at < length) return 'incomplete';
  const bytes = data.subarray(at, at + length);
  if (pageChecksum(bytes) !== bytes.readUInt32LE(22)) return 'invalid';
  return {
    page: {
      headerType: bytes[5] ?? 0,
      serial: bytes.readUInt32LE(14),
      lacing: Uint8Array.from(lacing),
      body: bytes.subarray(headerLength),
    },
    length,
  };
}

/** CRC-32 with generator 0x04c11db7, initial value 0, no reflection, over the page with its CRC field read as zero (RFC 3533 section 6). */
export function pageChecksum(page: Uint8Array): number {
  let crc = 0;
  for (let index = 0; index < page.length; index++) {
    const byte = index >= 22 && index < 26 ? 0 : (page[index] ?? 0);
    crc = ((crc << 8) ^ (CRC_TABLE[((crc >>> 24) ^ byte) & 0xff] ?? 0)) >>> 0;
  }
  return crc;
}

const CRC_TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let index = 0; index < 256; index++) {
    let value = index << 24;
    for (let bit = 0; bit < 8; bit++) value = value & 0x80000000 ? (value << 1) ^ 0x04c11db7 : value << 1;
    table[index] = value >>> 0;
  }
  return table;
})();
