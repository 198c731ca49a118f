import { ChunkParser, ItemRing } from '../../../src/recognition/audio-stream';

// The pure parts of a listened stream (src/recognition/audio-stream.ts): fpcalc's chunk output
// read across arbitrary cuts, and the bounded ring of the last items.

describe('ChunkParser', () => {
  test("reads each chunk's items, whatever the pieces the pipe delivers", () => {
    const output = 'DURATION=2\nFINGERPRINT=1,2,3\n\nDURATION=2\nFINGERPRINT=4294967295,5\n\n';
    for (let cut = 0; cut <= output.length; cut++) {
      const parser = new ChunkParser();
      const chunks = [...parser.push(output.slice(0, cut)), ...parser.push(output.slice(cut))];
      expect(chunks.map((chunk) => Array.from(chunk))).toEqual([
        [1, 2, 3],
        [4294967295, 5],
      ]);
    }
  });

  test('lines it does not know and an empty fingerprint give nothing', () => {
    expect(new ChunkParser().push('ERROR: Error decoding audio frame (End of file)\nFINGERPRINT=\nDURATION=0\n')).toEqual([]);
  });
});

describe('ItemRing', () => {
  test('keeps the last items and the stream position of the first', () => {
    const ring = new ItemRing(5);
    ring.push(Uint32Array.from([1, 2, 3]));
    expect(ring.window()).toEqual({ items: Uint32Array.from([1, 2, 3]), position: 0 });
    ring.push(Uint32Array.from([4, 5, 6]));
    expect(ring.window()).toEqual({ items: Uint32Array.from([2, 3, 4, 5, 6]), position: 1 });
    ring.push(Uint32Array.from([7, 8, 9, 10, 11, 12, 13]));
    expect(ring.window()).toEqual({ items: Uint32Array.from([9, 10, 11, 12, 13]), position: 8 });
  });
});
