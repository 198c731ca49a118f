import { openDatabase } from '../../../src/store/database';
import { createTrackStore } from '../../../src/store/tracks';
import { createHistoryPages } from '../../../src/server/history-pages';

// The copies of /v1/history pages: reused while the store is unchanged, remade after any write.

const titles = (body: string) => (JSON.parse(body) as { tracks: { title: string }[] }).tracks.map((track) => track.title);

describe('createHistoryPages', () => {
  const setup = () => {
    const db = openDatabase(':memory:');
    const tracks = createTrackStore(db);
    const add = async (title: string) =>
      tracks.insert({ receivedSeq: await tracks.nextReceivedSeq(), receivedAt: new Date().toISOString(), metadata: { title } });
    return { db, tracks, add, pages: createHistoryPages(tracks) };
  };

  it('When nothing was written, then the same page is the same copy', async () => {
    const { db, add, pages } = setup();
    await add('One');
    const first = await pages.answer({ limit: 10 });
    expect(await pages.answer({ limit: 10 })).toBe(first);
    db.close();
  });

  it('When a record is inserted, updated or removed, then the page is made again with another ETag', async () => {
    const { db, tracks, add, pages } = setup();
    const one = await add('One');
    const before = await pages.answer({ limit: 10 });
    await add('Two');
    const inserted = await pages.answer({ limit: 10 });
    expect(inserted.etag).not.toBe(before.etag);
    expect(titles(inserted.body)).toEqual(['Two', 'One']);
    await tracks.updateMetadata(one.dbid, { title: 'One (edit)' });
    const updated = await pages.answer({ limit: 10 });
    expect(updated.body).toContain('One (edit)');
    await tracks.remove(one.dbid);
    expect(titles((await pages.answer({ limit: 10 })).body)).toEqual(['Two']);
    db.close();
  });
});
