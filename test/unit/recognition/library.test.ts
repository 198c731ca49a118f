import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_TOOLS, decodeFile, fingerprintPcm, oneValue, parseRawFingerprint, tagsFromProbe } from '../../../src/recognition/audio-tools';
import { FingerprintIndex } from '../../../src/recognition/fingerprint-index';
import { addToLibrary, playlistEntries, removeFromLibrary, type AddEvent } from '../../../src/recognition/library';
import { openStore } from '../../../src/store/open-store';
import type { Store } from '../../../src/store/store';
import { gateOnPeers } from '../../helpers/peers';
import { makeSong, streamCopy } from '../../helpers/recognition-audio';
import { makeTempDir } from '../../helpers/temp-dir';

// The library (docs/recognition.md "The library") with the real tools: sox-made songs decoded by
// ffmpeg, fingerprinted by fpcalc, tagged as ffprobe reads them; and the matcher on excerpts of
// them as a stream carries them (MP3 at 64 kbit/s with noise), and on songs it never saw.

describe('reading the tools', () => {
  test("fpcalc's raw line as items", () => {
    expect(Array.from(parseRawFingerprint('DURATION=3\nFINGERPRINT=1,4294967295,0\n'))).toEqual([1, 4294967295, 0]);
    expect(parseRawFingerprint('DURATION=0\n')).toHaveLength(0);
  });

  test("ffprobe's tags, names as files spell them, the container's first", () => {
    const probe = {
      streams: [{ tags: { TITLE: 'Stream title', ARTIST: 'X', TSRC: 'GBAYE0000001', 'MusicBrainz Track Id': 'abc' } }],
      format: { tags: { title: 'Container title', publisher: 'Label', MUSICBRAINZ_ALBUMID: 'def', comment: 'ignored' } },
    };
    expect(tagsFromProbe(JSON.stringify(probe))).toEqual({
      title: 'Container title',
      artist: 'X',
      isrc: 'GBAYE0000001',
      label: 'Label',
      musicbrainzrecordingid: 'abc',
      musicbrainzalbumid: 'def',
    });
    expect(tagsFromProbe('not json')).toEqual({});
  });

  test('of a tag with several values, the one the file is named after, else the first', () => {
    expect(oneValue('Living Caves;Crossroads;Desert', 'hr3-desert.ogg')).toBe('Desert');
    expect(oneValue("Hell;Icy Lands;R'Lyeh", 'hr3-rlyeh.ogg')).toBe("R'Lyeh");
    expect(oneValue('Hell;Land of Eternal Motion', 'hr3-motion.ogg')).toBe('Land of Eternal Motion');
    expect(oneValue('One;Two', 'other.ogg')).toBe('One');
    expect(oneValue('AC;DC', '')).toBe('AC');
    expect(oneValue(' Plain ', 'x.ogg')).toBe('Plain');
  });

  test('an M3U playlist: local entries against its folder, no comments, no URLs', () => {
    const text = '\uFEFF#EXTM3U\r\n#EXTINF:123,A - B\r\na.mp3\r\n\r\n/abs/b.ogg\nhttp://radio.example/stream\nsub/c.flac\n';
    expect(playlistEntries(text, '/lists')).toEqual(['/lists/a.mp3', '/abs/b.ogg', '/lists/sub/c.flac']);
  });
});

const real = gateOnPeers(['sox', 'vorbiscomment', 'ffmpeg', 'ffprobe', 'fpcalc'], 'recognition library with ffmpeg, fpcalc and sox');

real.describe('the library on real files', () => {
  const temp = makeTempDir('svc-library-files-');
  const music = path.join(temp.dir, 'music');
  const held = path.join(temp.dir, 'held-out');
  let store: Store;
  let songs: string[];
  let heldOut: string[];
  real.beforeAll(async () => {
    fs.mkdirSync(path.join(music, 'crate'), { recursive: true });
    fs.mkdirSync(held);
    songs = [1, 2, 3, 4].map((seed) =>
      makeSong(seed < 3 ? music : path.join(music, 'crate'), `song-${seed}`, seed, 24, { artist: `Artist ${seed}`, title: `Song ${seed}` }),
    );
    heldOut = [11, 12, 13].map((seed) => makeSong(held, `held-${seed}`, seed));
    fs.writeFileSync(path.join(music, 'broken.mp3'), Buffer.alloc(4000, 7));
    store = await openStore(path.join(temp.dir, 'svc.db'), { maxImageBytes: 1000 });
  });
  real.afterAll(async () => {
    await store.close();
    temp.cleanup();
  });

  real.test('adds every song of a folder tree with its tags; an undecodable file and a missing folder are reported and skipped', async () => {
    const events: AddEvent[] = [];
    const summary = await addToLibrary({ store: store.library, tools: DEFAULT_TOOLS }, [music, path.join(temp.dir, 'nowhere')], (event) => events.push(event));
    expect(summary).toMatchObject({ added: 4, unchanged: 0, tracks: 4 });
    expect(summary.failed.map((problem) => path.basename(problem.path)).sort()).toEqual(['broken.mp3', 'nowhere']);
    expect(summary.failed.find((problem) => problem.path.endsWith('nowhere'))?.error).toBe('no such file or folder');
    expect(summary.failed.find((problem) => problem.path.endsWith('broken.mp3'))?.error).toMatch(/^cannot decode/);
    const progress = events.filter((event) => event.type === 'progress');
    expect(progress.map((event) => event.done)).toEqual([1, 2, 3, 4, 5]);
    const list = await store.library.list();
    expect(list.map((entry) => entry.tags)).toEqual(expect.arrayContaining([{ artist: 'Artist 3', title: 'Song 3' }]));
    for (const entry of list) {
      expect(entry.durationSeconds).toBeGreaterThan(23);
      const { items: fingerprintLength } = entry;
      expect(fingerprintLength).toBeGreaterThan(150);
    }
  });

  real.test('adding again reads nothing unchanged; a changed file is read again', async () => {
    const again = await addToLibrary({ store: store.library, tools: DEFAULT_TOOLS }, [music]);
    expect(again).toMatchObject({ added: 0, unchanged: 4 });
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(songs[0], later, later);
    expect(await addToLibrary({ store: store.library, tools: DEFAULT_TOOLS }, [music])).toMatchObject({ added: 1, unchanged: 3 });
  });

  real.test('a playlist names files anywhere; removal by folder takes its files only', async () => {
    const list = path.join(temp.dir, 'set.m3u');
    fs.writeFileSync(list, `#EXTM3U\nheld-out/${path.basename(heldOut[0])}\n`);
    expect(await addToLibrary({ store: store.library, tools: DEFAULT_TOOLS }, [list])).toMatchObject({ added: 1, tracks: 5 });
    let changes = 0;
    expect(await removeFromLibrary({ store: store.library, tools: DEFAULT_TOOLS, changed: () => changes++ }, { path: held })).toHaveLength(1);
    expect(changes).toBe(1);
    expect(await store.library.count()).toBe(4);
  });

  real.test('excerpts as a stream carries them (MP3 64 kbit/s, noise) find their song; songs never added find nothing', async () => {
    const index = new FingerprintIndex(await store.library.fingerprints());
    const titleOf = new Map((await store.library.list()).map((entry) => [entry.id, entry.tags.title]));
    const query = async (source: string, from: number, name: string) => {
      const copy = streamCopy(source, path.join(temp.dir, `${name}.mp3`), { from, seconds: 8, kbps: 64, noise: 0.05 });
      return index.search(await fingerprintPcm(DEFAULT_TOOLS, await decodeFile(DEFAULT_TOOLS, copy)));
    };
    for (const [i, song] of songs.entries()) {
      const match = await query(song, 4 + i * 3, `copy-${i}`);
      expect(titleOf.get(match?.trackId ?? -1)).toBe(`Song ${i + 1}`);
    }
    for (const [i, song] of heldOut.entries()) expect(await query(song, 6, `held-copy-${i}`)).toBeNull();
  });
});
