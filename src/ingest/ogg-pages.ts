// Ogg pages (RFC 3533 section 6) read from a byte stream that arrives in pieces of any size.
// Pure: no I/O. Memory is bounded by the largest legal page (27 + 255 + 255 * 255 bytes) plus
// one arriving piece; bytes that are not a page are skipped within a budget, then refused.

const CAPTURE = Buffer.from('OggS', 'latin1');
const HEADER_BYTES = 27;
/** Header flags (RFC 3533 section 6, header_type_flag). */
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
  /** Arrived bytes not yet read, kept as pieces until `needed` bytes are there (no copy per tiny piece). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private needed = HEADER_BYTES;
  private skipped = 0;
  private readonly maxSkippedBytes: number;

  constructor(options: PageReaderOptions = {}) {
    this.maxSkippedBytes = options.maxSkippedBytes ?? 65_536;
  }

  /** The pages completed by this piece, in order. Throws OggStreamError past the skip budget. */
  push(piece: Buffer): OggPage[] {
    this.pending.push(piece);
    this.pendingBytes += piece.length;
    if (this.pendingBytes < this.needed) return [];
    const data = this.pending.length === 1 ? piece : Buffer.concat(this.pending);
    this.needed = HEADER_BYTES;
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
      if (typeof page === 'number') {
        this.needed = page;
        break;
      }
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
    const rest = Buffer.from(data.subarray(at));
    this.pending = [rest];
    this.pendingBytes = rest.length;
    return pages;
  }

  private skip(count: number): void {
    this.skipped += count;
    if (this.skipped > this.maxSkippedBytes) {
      throw new OggStreamError(`no Ogg page in ${this.skipped} bytes`);
    }
  }
}

/** A page and its length; 'invalid'; or, while incomplete, the bytes needed from `at` to go on. */
type PageRead = { page: OggPage; length: number } | 'invalid' | number;

function readPage(data: Buffer, at: number): PageRead {
  if (data.length - at < HEADER_BYTES) return HEADER_BYTES;
  if (data[at + 4] !== 0) return 'invalid'; // stream_structure_version is 0
  const segmentCount = data[at + 26] ?? 0;
  const headerLength = HEADER_BYTES + segmentCount;
  if (data.length - at < headerLength) return headerLength;
  const lacing = data.subarray(at + HEADER_BYTES, at + headerLength);
  let bodyLength = 0;
  for (const value of lacing) bodyLength += value;
  const length = headerLength + bodyLength;
  if (data.length - at < length) return length;
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
