import { openDatabase } from '../../../../src/store/sqlite/database';
import { createTrackStore } from '../../../../src/store/sqlite/tracks';
import { HISTORY_PAGE_MAX_BYTES, createHistoryPages } from '../../../../src/server/read-models/history-pages';

// The copies of /v1/history pages: reused while the store is unchanged, remade after any write;
// a before= page of settled records is kept across writes until a deletion.

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

  it('When a before= page holds only settled records, then writes keep it and a deletion drops it; a page of young records is made again', async () => {
    const db = openDatabase(':memory:');
    const tracks = createTrackStore(db);
    let clock = Date.UTC(2026, 0, 1);
    const pages = createHistoryPages(tracks, () => clock);
    const add = async (title: string) =>
      tracks.insert({ receivedSeq: await tracks.nextReceivedSeq(), receivedAt: new Date(clock).toISOString(), metadata: { title } });
    const old = [await add('Old 1'), await add('Old 2'), await add('Old 3')];
    const cursor = { limit: 10, before: (old[2]?.dbid ?? 0) + 1 };
    // Young: not kept past a write.
    await pages.answer(cursor);
    await add('Young');
    expect(pages.cached(cursor)).toBeUndefined();
    // Settled: older than 15 minutes (docs/limits-and-load.md "Expensive requests").
    clock += 15 * 60 * 1000 + 1;
    const settled = await pages.answer(cursor);
    expect(titles(settled.body)).toEqual(['Old 3', 'Old 2', 'Old 1']);
    await add('New');
    expect(pages.cached(cursor)).toBe(settled);
    expect(await pages.answer(cursor)).toBe(settled);
    await tracks.remove(old[1]?.dbid ?? 0);
    expect(pages.cached(cursor)).toBeUndefined();
    expect(titles((await pages.answer(cursor)).body)).toEqual(['Old 3', 'Old 1']);
    db.close();
  });

  it('When a page would pass HISTORY_PAGE_MAX_BYTES, then it stops early with a next link that continues it', async () => {
    const { db, tracks, pages } = setup();
    const big = 'b'.repeat(60_000);
    for (let index = 0; index < 120; index += 1) {
      await tracks.insert({
        receivedSeq: await tracks.nextReceivedSeq(),
        receivedAt: new Date(Date.UTC(2026, 0, 1, 0, index)).toISOString(),
        metadata: { title: `t${index}`, big },
      });
    }
    const seen: number[] = [];
    let before: number | undefined;
    for (let pageCount = 0; pageCount < 20; pageCount += 1) {
      const { body } = await pages.answer(before === undefined ? { limit: 1000 } : { limit: 1000, before });
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(HISTORY_PAGE_MAX_BYTES);
      const page = JSON.parse(body) as { tracks: { dbid: number }[]; next?: string };
      seen.push(...page.tracks.map((track) => track.dbid));
      before = page.tracks.at(-1)?.dbid;
      if (page.next === undefined) break;
      expect(page.next).toBe(`v1/history?before=${before}&limit=1000`);
    }
    expect(seen).toEqual(Array.from({ length: 120 }, (_, index) => 120 - index));
    db.close();
  });
});
