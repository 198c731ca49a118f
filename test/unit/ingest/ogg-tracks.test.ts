import { fieldsFromComments, isWantedComment } from '../../../src/ingest/comment-fields';
import { OggStreamError } from '../../../src/ingest/ogg-pages';
import { OggTrackReader, type TrackComments } from '../../../src/ingest/ogg-tracks';
import { chain, encodeFlacOgg, encodeOpus, encodeVorbis, makeTone } from '../../helpers/audio-files';
import { VORBIS_COMMENT_PREFIX, VORBIS_ID_PACKET, oggPage, vorbisCommentPacket } from '../../helpers/ogg-pages';
import { AUDIO_TOOLS, gateOnPeers } from '../../helpers/peers';
import { makeTempDir } from '../../helpers/temp-dir';

// The Ogg reader of the Icecast listener (docs/dj-software.md), on real encoder output cut at
// every awkward place, and on streams made to be refused.

const temp = makeTempDir('svc-ogg-');
afterAll(() => temp.cleanup());

// The tests on real encoder output need sox and the encoders; the rest build their pages by hand.
const withAudio = gateOnPeers(AUDIO_TOOLS, 'Ogg reader on real encoder output');

let vorbis: string;
let opus: string;
let flac: string;
withAudio.beforeAll(() => {
  vorbis = encodeVorbis(makeTone(temp.dir, 'one', 440, 1), { artist: 'Artist One', title: 'First Title', album: 'Album A' });
  opus = encodeOpus(makeTone(temp.dir, 'two', 660, 1), { artist: 'Artist Two', title: 'Second Title', album: 'Album B' });
  flac = encodeFlacOgg(makeTone(temp.dir, 'three', 880, 1), { artist: 'Artist Three', title: 'Third Title', album: 'Album C' });
});

function readAll(stream: Buffer, pieceSizes: (index: number) => number, reader = new OggTrackReader({ wanted: isWantedComment })): TrackComments[] {
  const found: TrackComments[] = [];
  for (let at = 0, index = 0; at < stream.length; index++) {
    const size = Math.max(1, pieceSizes(index));
    found.push(...reader.push(stream.subarray(at, at + size)));
    at += size;
  }
  return found;
}

function summary(tracks: TrackComments[]): { codec: string; fields: Record<string, string> }[] {
  return tracks.map((track) => ({ codec: track.codec, fields: fieldsFromComments(track.comments) }));
}

const EXPECTED = [
  { codec: 'vorbis', fields: { artist: 'Artist One', title: 'First Title', album: 'Album A', track: '3', track_total: '12' } },
  { codec: 'opus', fields: { artist: 'Artist Two', title: 'Second Title', album: 'Album B' } },
  { codec: 'flac', fields: { artist: 'Artist Three', title: 'Third Title', album: 'Album C' } },
];

withAudio.test('a chained Vorbis + Opus + FLAC-in-Ogg stream gives one comment set per track, whole', () => {
  expect(summary(readAll(chain(vorbis, opus, flac), () => 1 << 20))).toEqual(EXPECTED);
});

withAudio.test.each([
  ['one byte at a time', () => 1],
  ['3 bytes (the capture pattern cut in two)', () => 3],
  ['27 bytes (a page header cut from its lacing)', () => 27],
  ['pieces of 1 to 700 bytes', (index: number) => ((index * 7919) % 700) + 1],
])('pages and packets split at awkward places: %s', (_name, sizes) => {
  expect(summary(readAll(chain(vorbis, opus, flac), sizes))).toEqual(EXPECTED);
});

test('a comment packet over several pages keeps the short tags and passes over a large picture', () => {
  const picture = `METADATA_BLOCK_PICTURE=${'A'.repeat(300_000)}`;
  const packet = vorbisCommentPacket(VORBIS_COMMENT_PREFIX, ['ARTIST=Big Art', picture, 'TITLE=After The Picture']);
  const pages = [oggPage({ serial: 7, sequence: 0, headerType: 0x02, segments: [VORBIS_ID_PACKET] })];
  // The packet cut into pages of at most 255 * 200 bytes, each continuing the last.
  const perPage = 255 * 200;
  for (let at = 0, sequence = 1; at < packet.length; at += perPage, sequence++) {
    const part = packet.subarray(at, at + perPage);
    const last = at + perPage >= packet.length;
    pages.push(oggPage({ serial: 7, sequence, headerType: at === 0 ? 0 : 0x01, segments: [part], lastContinues: !last }));
  }
  const tracks = readAll(Buffer.concat(pages), () => 4096);
  expect(summary(tracks)).toEqual([{ codec: 'vorbis', fields: { artist: 'Big Art', title: 'After The Picture' } }]);
});

withAudio.test('a page with a wrong checksum is passed over; the next good one is read', () => {
  const good = chain(vorbis);
  const damaged = Buffer.from(good);
  damaged[40] = (damaged[40] ?? 0) ^ 0xff; // inside the first page: its CRC no longer matches
  const reader = new OggTrackReader({ wanted: isWantedComment });
  expect(reader.push(damaged)).toEqual([]);
  expect(summary(reader.push(good))).toEqual([EXPECTED[0]]);
});

test('bytes that are not Ogg are refused once the skip budget is spent', () => {
  const reader = new OggTrackReader({ wanted: isWantedComment, maxSkippedBytes: 65_536 });
  const noise = Buffer.alloc(70_000, 0x5a);
  expect(() => reader.push(noise)).toThrow(OggStreamError);
});

test('a comment header that never ends is refused at the packet cap', () => {
  const reader = new OggTrackReader({ wanted: isWantedComment, maxPacketBytes: 1_000_000 });
  reader.push(oggPage({ serial: 9, sequence: 0, headerType: 0x02, segments: [VORBIS_ID_PACKET] }));
  // A vendor string that claims 4 GB: the header goes on page after page.
  const start = Buffer.alloc(255, 0x41);
  VORBIS_COMMENT_PREFIX.copy(start);
  start.writeUInt32LE(0xfffffff0, VORBIS_COMMENT_PREFIX.length);
  reader.push(oggPage({ serial: 9, sequence: 1, headerType: 0, segments: [start], lastContinues: true }));
  const endless = () => {
    for (let sequence = 2; sequence < 100; sequence++) {
      reader.push(oggPage({ serial: 9, sequence, headerType: 0x01, segments: [Buffer.alloc(255 * 200, 0x41)], lastContinues: true }));
    }
  };
  expect(endless).toThrow(/comment header over 1000000 bytes/);
});

test('a second packet that is not a comment header of the codec is refused', () => {
  const reader = new OggTrackReader({ wanted: isWantedComment });
  const stream = Buffer.concat([
    oggPage({ serial: 1, sequence: 0, headerType: 0x02, segments: [VORBIS_ID_PACKET] }),
    oggPage({ serial: 1, sequence: 1, headerType: 0, segments: [Buffer.from('\x05vorbis-not-comments')] }),
  ]);
  expect(() => reader.push(stream)).toThrow(/not a vorbis comment header/);
});

test('streams of other codecs (no identification svc knows) give nothing and are not refused', () => {
  const reader = new OggTrackReader({ wanted: isWantedComment });
  const theora = oggPage({ serial: 2, sequence: 0, headerType: 0x02, segments: [Buffer.from('\x80theora-header')] });
  const next = oggPage({ serial: 2, sequence: 1, headerType: 0, segments: [Buffer.from('anything')] });
  expect(reader.push(Buffer.concat([theora, next]))).toEqual([]);
});

test('too many logical streams open at once are refused', () => {
  const reader = new OggTrackReader({ wanted: isWantedComment, maxOpenStreams: 2 });
  const bos = (serial: number) => oggPage({ serial, sequence: 0, headerType: 0x02, segments: [VORBIS_ID_PACKET] });
  expect(() => reader.push(Buffer.concat([bos(1), bos(2), bos(3)]))).toThrow(/more than 2 logical streams/);
});

test('comment names map to submission fields; repeats are joined; numbers carry their totals', () => {
  const comments = new Map<string, string[]>([
    ['ARTIST', ['A', 'B']],
    ['DISCNUMBER', ['1/2']],
    ['MUSICBRAINZ_TRACKID', ['0b0c-id']],
    ['ISRC', ['  ']],
  ]);
  expect(fieldsFromComments(comments)).toEqual({ artist: 'A, B', disc: '1', disc_total: '2', musicbrainzrecordingid: '0b0c-id' });
  expect(isWantedComment('METADATA_BLOCK_PICTURE')).toBe(false);
});
