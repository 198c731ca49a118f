import type { TrackStore } from '../../src/store/tracks';

/** How many records are stored, counted through the store's history pages (its public surface). */
export async function storedCount(tracks: Pick<TrackStore, 'history'>): Promise<number> {
  let count = 0;
  let before: number | undefined;
  for (;;) {
    const page = await tracks.history(before === undefined ? { limit: 1000 } : { limit: 1000, before });
    count += page.records.length;
    const oldest = page.records.at(-1);
    if (!page.more || !oldest) return count;
    before = oldest.dbid;
  }
}
