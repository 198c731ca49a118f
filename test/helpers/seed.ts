import { openDatabase } from '../../src/store/sqlite/database';
import { createTrackStore } from '../../src/store/sqlite/tracks';

/** Writes `count` records of about 4 KB each (a long biography) into a new SQLite file, one second apart. */
export async function seedHistory(dbFile: string, count: number): Promise<void> {
  const db = openDatabase(dbFile);
  const tracks = createTrackStore(db);
  const bio = 'A long artist biography. '.repeat(160);
  for (let index = 0; index < count; index += 1) {
    const receivedAt = new Date(Date.UTC(2026, 0, 1) + index * 1000).toISOString();
    await tracks.insert({ receivedSeq: index + 1, receivedAt, metadata: { artist: 'A', title: `T${index}`, artistlongbio: bio } });
  }
  db.close();
}
