import { sniffImageType } from '../../../src/domain/image';
import { MAGIC, makePng } from '../../helpers/images';

describe('sniffImageType', () => {
  it('When the bytes start like JPEG, PNG, GIF or WebP, then that is the type', () => {
    expect(sniffImageType(MAGIC.jpeg)).toBe('image/jpeg');
    expect(sniffImageType(MAGIC.png)).toBe('image/png');
    expect(sniffImageType(makePng(2, 2, [0, 0, 0], [255, 255, 255]))).toBe('image/png');
    expect(sniffImageType(MAGIC.gif)).toBe('image/gif');
    expect(sniffImageType(Buffer.concat([Buffer.from('GIF87a'), Buffer.alloc(6)]))).toBe('image/gif');
    expect(sniffImageType(MAGIC.webp)).toBe('image/webp');
  });

  it('When the bytes are anything else or too short to tell, then they are refused', () => {
    const refused = [
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>'),
      Buffer.from('<!doctype html><html></html>'),
      Buffer.from('BM6\x00\x00\x00\x00\x00\x00\x006\x00\x00\x00', 'latin1'), // BMP
      Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt ')]), // RIFF but audio
      Buffer.from([0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x10, 0x10, 0x00, 0x00, 0x01, 0x00]), // ICO
      MAGIC.jpeg.subarray(0, 11),
      Buffer.alloc(0),
      Buffer.from('GIF90a\x00\x00\x00\x00\x00\x00', 'latin1'),
    ];
    for (const bytes of refused) expect(sniffImageType(bytes)).toBeNull();
  });
});
