import zlib from 'node:zlib';

// The one home of the tests' image bytes: real, decodable images (a browser has to draw them),
// made without any dependency, and the few fixed byte strings that sniff as a format.

/** The eight bytes every PNG starts with. */
export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The head of a PNG up to its IHDR chunk's type: what the store's sniffer needs in front of any bytes. */
export const PNG_HEAD = Buffer.concat([PNG_SIGNATURE, Buffer.from([0, 0, 0, 13]), Buffer.from('IHDR', 'latin1')]);

/** A real 1x1 PNG (one transparent pixel), for tests that store, serve or compare a small image. */
export const TINY_PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

export type Rgb = readonly [number, number, number];

/** A PNG of `width` x `height`: a diagonal blend from `from` to `to`, with a light disc in the middle. */
export function makePng(width: number, height: number, from: Rgb, to: Rgb): Buffer {
  const rows: Buffer[] = [];
  const radius = Math.min(width, height) / 4;
  for (let y = 0; y < height; y += 1) {
    const row = Buffer.alloc(1 + width * 3); // filter byte 0 (None), then RGB
    for (let x = 0; x < width; x += 1) {
      const t = (x / width + y / height) / 2;
      const inDisc = (x - width / 2) ** 2 + (y - height / 2) ** 2 < radius ** 2;
      for (let c = 0; c < 3; c += 1) {
        const value = Math.round((from[c] ?? 0) * (1 - t) + (to[c] ?? 0) * t);
        row[1 + x * 3 + c] = inDisc ? Math.min(255, value + 90) : value;
      }
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: truecolour
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))]);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length, 0);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body) >>> 0, 0);
  return Buffer.concat([length, body, crc]);
}

/** Just enough bytes to sniff as each format (not decodable images). */
export const MAGIC = {
  jpeg: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01]),
  png: PNG_HEAD,
  gif: Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00', 'latin1'),
  webp: Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WEBPVP8 ')]),
};

/** A distinct small valid-looking JPEG-prefixed payload of `size` bytes (content differs per `seed`). */
export function fakeJpeg(size: number, seed: number): Buffer {
  const bytes = Buffer.alloc(Math.max(size, MAGIC.jpeg.length), seed & 0xff);
  MAGIC.jpeg.copy(bytes);
  bytes.writeUInt32BE(seed >>> 0, bytes.length - 4);
  return bytes;
}

/**
 * The RGBA of a 1×1 PNG (a one-pixel screenshot). With one pixel in one row, every PNG filter
 * leaves the bytes as they are, so inflating the image data is all the decoding needed.
 */
export function onePixelRgba(png: Buffer): number[] {
  const idat: Buffer[] = [];
  let colorType = 6;
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') colorType = data[9] ?? 6;
    if (type === 'IDAT') idat.push(data);
    at += 12 + length;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const channels = colorType === 6 ? 4 : 3;
  const pixel = [...raw.subarray(1, 1 + channels)];
  return channels === 4 ? pixel : [...pixel, 255];
}
