import fs from 'node:fs';
import { ChunkParser, ItemRing, startAudioStream } from '../../../src/recognition/audio-stream';
import { DEFAULT_TOOLS } from '../../../src/recognition/audio-tools';
import { gateOnPeers } from '../../helpers/peers';
import { makeSong } from '../../helpers/recognition-audio';
import { makeTempDir } from '../../helpers/temp-dir';

// The pure parts of a listened stream (src/recognition/audio-stream.ts): fpcalc's chunk output
// read across arbitrary cuts, and the bounded ring of the last items; and, with the real ffmpeg
// and fpcalc, the reason a stream gives when its source ends it.

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

const HANG_GUARD_MS = 60_000;
const real = gateOnPeers(['sox', 'oggenc', 'vorbiscomment', 'ffmpeg', 'fpcalc'], "a stream's end reason");
const temp = makeTempDir('svc-audio-stream-');
let song: Buffer;

real.beforeAll(() => {
  song = fs.readFileSync(makeSong(temp.dir, 'song', 71, 6));
}, HANG_GUARD_MS);

real.afterAll(() => temp.cleanup());

/** A stream fed the whole song at once and ended: the reason it gives. */
function endOf(bytes: Buffer, reason?: string): Promise<string> {
  return new Promise((resolve) => {
    const stream = startAudioStream({ tools: DEFAULT_TOOLS, windowItems: 64, realTime: false, onWindow: () => undefined, onEnd: resolve });
    stream.write(bytes);
    stream.end(reason);
  });
}

real.test(
  'a source that hangs up ends its stream with the reason it is given, never as a decoder error, whichever program is seen to end first',
  async () => {
    // Several at once: the order of ffmpeg's and fpcalc's ends varies from one to the next.
    const reasons = await Promise.all(Array.from({ length: 6 }, () => endOf(song, 'the source disconnected')));
    expect(reasons).toEqual(Array.from({ length: 6 }, () => 'the source disconnected'));
    expect(await endOf(song)).toBe('the stream ended');
    // Bytes that are no audio keep their own reason.
    expect(await endOf(Buffer.alloc(64 * 1024, 7), 'the source disconnected')).toMatch(/^(the stream ended without audio in it|ffmpeg stopped)/);
  },
  HANG_GUARD_MS,
);

/** How often the ffmpeg wrapper below looks for fpcalc's marker (a shell `sleep` argument). */
const MARKER_POLL_SECONDS = '0.02';

real.test(
  'fpcalc seen to end before ffmpeg (its output over, its exit not yet told) is still the stream ending well',
  async () => {
    // Wrappers force the order: ffmpeg closes its output, then exits only once fpcalc has.
    const marker = `${temp.dir}/fpcalc-done`;
    const ffmpeg = `${temp.dir}/ffmpeg-late.sh`;
    const fpcalc = `${temp.dir}/fpcalc-marks.sh`;
    const late = `ffmpeg "$@"; code=$?; exec >&-; while [ ! -e '${marker}' ]; do sleep ${MARKER_POLL_SECONDS}; done; exit $code`;
    fs.writeFileSync(ffmpeg, `#!/bin/sh\n${late}\n`, { mode: 0o755 });
    fs.writeFileSync(fpcalc, `#!/bin/sh\nfpcalc "$@"; code=$?; touch '${marker}'; exit $code\n`, { mode: 0o755 });
    const reason = await new Promise<string>((resolve) => {
      const tools = { ...DEFAULT_TOOLS, ffmpeg, fpcalc };
      const stream = startAudioStream({ tools, windowItems: 64, realTime: false, onWindow: () => undefined, onEnd: resolve });
      stream.write(song);
      stream.end('the source disconnected');
    });
    expect(fs.existsSync(marker)).toBe(true);
    expect(reason).toBe('the source disconnected');
  },
  HANG_GUARD_MS,
);
