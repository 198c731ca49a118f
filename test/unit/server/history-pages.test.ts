import { openDatabase } from '../../../src/store/database';
import { createTrackStore } from '../../../src/store/tracks';
import { createHistoryPages } from '../../../src/server/history-pages';

// The copies of /v1/history pages: reused while the store is unchanged, remade after any write.

const titles = (body: string) => (JSON.parse(body) as { tracks: { title: string }[] }).tracks.map((track) => track.title);

describe('createHistoryPages', () => {
  const setup = () => {
    const db = openDatabase(':memory:');
    const tracks = createTrackStore(db);
    const add = (title: string) => tracks.insert({ receivedSeq: tracks.nextReceivedSeq(), receivedAt: new Date().toISOString(), metadata: { title } });
    return { db, tracks, add, pages: createHistoryPages(tracks) };
  };

  it('When nothing was written, then the same page is the same copy', () => {
    const { db, add, pages } = setup();
    add('One');
    const first = pages.answer({ limit: 10 });
    expect(pages.answer({ limit: 10 })).toBe(first);
    db.close();
  });

  it('When a record is inserted, updated or removed, then the page is made again with another ETag', () => {
    const { db, tracks, add, pages } = setup();
    const one = add('One');
    const before = pages.answer({ limit: 10 });
    add('Two');
    const inserted = pages.answer({ limit: 10 });
    expect(inserted.etag).not.toBe(before.etag);
    expect(titles(inserted.body)).toEqual(['Two', 'One']);
    tracks.updateMetadata(one.dbid, { title: 'One (edit)' });
    const updated = pages.answer({ limit: 10 });
    expect(updated.body).toContain('One (edit)');
    tracks.remove(one.dbid);
    expect(titles(pages.answer({ limit: 10 }).body)).toEqual(['Two']);
    db.close();
  });
});
