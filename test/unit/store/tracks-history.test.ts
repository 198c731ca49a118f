import { openDatabase } from '../../../src/store/sqlite/database';
import { HISTORY_PAGE_SQL, createTrackStore } from '../../../src/store/sqlite/tracks';

// The history page query walks the (received_at, dbid) index: no table scan, no sort.

describe('the history page query', () => {
  it('When SQLite plans it, then it searches tracks_by_received_at and needs no temporary sort', () => {
    const db = openDatabase(':memory:');
    try {
      const plan = db
        .prepare<[string, number, string, number], { detail: string }>(`EXPLAIN QUERY PLAN ${HISTORY_PAGE_SQL}`)
        .all('2026-11-22T20:00:00.000Z', 10, '2026-11-22T00:00:00.000Z', 101)
        .map((step) => step.detail);
      expect(plan).toHaveLength(1);
      expect(plan[0]).toMatch(/^SEARCH tracks USING (COVERING )?INDEX tracks_by_received_at /);
      expect(plan.join('\n')).not.toMatch(/TEMP B-TREE|SCAN/);
    } finally {
      db.close();
    }
  });

  it('When stored times are out of dbid order (rows written before times were kept in order), then pages follow the received time and each record comes once', async () => {
    const db = openDatabase(':memory:');
    try {
      const tracks = createTrackStore(db);
      // Written as an older version did: a slow submission that arrived first, stored last (a later dbid, an earlier time).
      const times = ['2026-11-22T20:00:02.000Z', '2026-11-22T20:00:03.000Z', '2026-11-22T20:00:01.000Z', '2026-11-22T20:00:03.000Z'];
      const insert = db.prepare<[number, string], never>("INSERT INTO tracks (received_seq, received_at, stored_at, metadata) VALUES (?, ?, '', '{}')");
      const dbids = times.map((receivedAt, i) => Number(insert.run(i + 1, receivedAt).lastInsertRowid));
      const seen: number[] = [];
      let before: number | undefined;
      for (;;) {
        const page = await tracks.history({ limit: 1, before });
        seen.push(...page.records.map((r) => r.dbid));
        if (!page.more) break;
        before = page.records.at(-1)?.dbid;
      }
      expect(seen).toEqual([dbids[3], dbids[1], dbids[0], dbids[2]]);
    } finally {
      db.close();
    }
  });
});
