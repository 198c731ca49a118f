import path from 'node:path';
import { openDatabase } from '../../../src/store/sqlite/database';
import type { Migration } from '../../../src/store/migrations';
import { makeTempDir } from '../../helpers/temp-dir';

// A start that upgrades the schema says so once, with the version before and after (the server
// logs it: docs/running.md "Upgrades"); a start with nothing to apply says nothing.

const ONE: Migration = { version: 1, name: 'one', sql: 'CREATE TABLE one (id INTEGER)' };
const TWO: Migration = { version: 2, name: 'two', sql: 'CREATE TABLE two (id INTEGER)' };

test('When a start applies migrations, then it reports the schema version before and after; when none is pending, nothing', () => {
  const temp = makeTempDir('svc-migrate-');
  try {
    const file = path.join(temp.dir, 'svc.db');
    const reports: [number, number][] = [];
    const report = (from: number, to: number) => reports.push([from, to]);
    openDatabase(file, [ONE], report).close();
    openDatabase(file, [ONE, TWO], report).close();
    openDatabase(file, [ONE, TWO], report).close();
    expect(reports).toEqual([
      [0, 1],
      [1, 2],
    ]);
  } finally {
    temp.cleanup();
  }
});
