import { silentLogger } from '../../helpers/silent-logger';
import { RecordUpdates } from '../../../src/pipeline/record-updates';
import { NowPlaying } from '../../../src/domain/current-track';
import { openSqliteStore } from '../../../src/store/open-store';

function setUp() {
  const store = openSqliteStore(':memory:', { maxImageBytes: 1024 * 1024 });
  const nowPlaying = new NowPlaying(null);
  const insert = async (title: string) => {
    const record = await store.tracks.insert({
      receivedSeq: await store.tracks.nextReceivedSeq(),
      receivedAt: new Date().toISOString(),
      metadata: { artist: 'A', title },
    });
    nowPlaying.offer(record);
    return record;
  };
  return { store, nowPlaying, insert, deps: { tracks: store.tracks, nowPlaying, logger: silentLogger, maxRecordBytes: 65536 } };
}

describe('RecordUpdates (the one update path of a stored record)', () => {
  it('When three fills come at once, then they are written and announced together, once, and only empty fields are filled', async () => {
    const { store, nowPlaying, insert, deps } = setUp();
    const updates = new RecordUpdates(await insert('T'), deps);
    const announced: unknown[] = [];
    nowPlaying.on('track-updated', (record) => announced.push(record.metadata));
    updates.fill({ album: 'Mezzanine', title: 'Not this' }, { provider: 'musicbrainz' });
    updates.fill({ label: 'Virgin' }, { provider: 'enrichment', fieldSources: { label: 'musicbrainz' } });
    updates.fill({ coverurl: 'cover/abc' });
    const settled = await updates.settled();
    const expected = {
      artist: 'A',
      title: 'T',
      album: 'Mezzanine',
      label: 'Virgin',
      coverurl: 'cover/abc',
      enrichment_sources: { album: 'musicbrainz', label: 'musicbrainz' },
    };
    expect(settled.metadata).toEqual(expected);
    expect(announced).toEqual([expected]);
    expect((await store.tracks.byDbid(settled.dbid))?.metadata).toEqual(expected);
    await store.close();
  });

  it('When a cover arrives while a text update waits out the spacing, then both go out at once: an image is never held (docs/decisions.md "Complete frames")', async () => {
    const { store, nowPlaying, insert, deps } = setUp();
    // A spacing far longer than the test: only an update that skips it can be announced in time.
    const updates = new RecordUpdates(await insert('T'), deps, 60_000);
    const announced: unknown[] = [];
    nowPlaying.on('track-updated', (record) => announced.push(record.metadata));
    updates.fill({ label: 'Virgin' }, { provider: 'musicbrainz' });
    updates.fill({ coverurl: 'cover/abc' });
    await new Promise<void>((resolve) => nowPlaying.once('track-updated', () => resolve()));
    expect(announced).toEqual([{ artist: 'A', title: 'T', label: 'Virgin', coverurl: 'cover/abc', enrichment_sources: { label: 'musicbrainz' } }]);
    updates.stop();
    await store.close();
  });

  it('When a repeat corrects fields, then they replace the stored ones, lose their enrichment credit, and an unchanged repeat announces nothing', async () => {
    const { store, nowPlaying, insert, deps } = setUp();
    const updates = new RecordUpdates(await insert('T'), deps, 0);
    updates.fill({ album: 'Mezanine', label: 'Virgin' }, { provider: 'musicbrainz' });
    await updates.settled();
    const announced: unknown[] = [];
    nowPlaying.on('track-updated', (record) => announced.push(record.metadata));
    updates.correct({ album: 'Mezzanine' });
    const settled = await updates.settled();
    expect(settled.metadata).toEqual({ artist: 'A', title: 'T', album: 'Mezzanine', label: 'Virgin', enrichment_sources: { label: 'musicbrainz' } });
    updates.correct({ album: 'Mezzanine', label: 'Virgin' });
    await updates.settled();
    expect(announced).toHaveLength(1);
    expect((await store.tracks.byDbid(settled.dbid))?.metadata).toEqual(settled.metadata);
    await store.close();
  });

  it('When an older record is filled after a newer one became current, then its row changes and nothing is announced', async () => {
    const { store, nowPlaying, insert, deps } = setUp();
    const older = new RecordUpdates(await insert('Older'), deps);
    await insert('Newer');
    const announced: unknown[] = [];
    nowPlaying.on('track-updated', (record) => announced.push(record));
    older.fill({ album: 'Late' }, { provider: 'test' });
    const settled = await older.settled();
    expect((await store.tracks.byDbid(settled.dbid))?.metadata.album).toBe('Late');
    expect(announced).toEqual([]);
    expect(nowPlaying.current()?.metadata.title).toBe('Newer');
    await store.close();
  });
});
