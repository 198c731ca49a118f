import { execFileSync } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { asObject, request } from '../helpers/http';
import { runCli } from '../helpers/run-cli';
import { startServeProcess } from '../helpers/serve-process';
import { makeTempDir } from '../helpers/temp-dir';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../helpers/postgres';
import { openDatabase } from '../../src/store/sqlite/database';
import { MIGRATIONS } from '../../src/store/sqlite/migrations';
import { POSTGRES_MIGRATIONS, migratePostgres } from '../../src/store/postgres/migrations';
import { latestVersion } from '../../src/store/migrations';
import { openStore } from '../../src/store/open-store';
import { VERSION } from '../../src/version';

// docs/running.md "Versions" and "Upgrades": the release, the commit of a clone and the schema
// versions are named by --version, /v1/status and the banner; a database a newer svc upgraded is
// refused with both versions named (made here by bumping the number in a test database); a
// database of the previous release's schema (0.1.0: SQLite 7, PostgreSQL 4) keeps every record.

const ROOT = path.join(__dirname, '..', '..');
const SQLITE_LATEST = latestVersion(MIGRATIONS);
const POSTGRES_LATEST = latestVersion(POSTGRES_MIGRATIONS);
const PREVIOUS_RELEASE = { sqlite: 7, postgresql: 4 };
const HEAD = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim().slice(0, 12);

/** Records of the previous release's shape: the columns its schema had. */
const OLD_TRACKS = Array.from({ length: 25 }, (_, i) => ({
  receivedAt: `2026-11-01T10:${String(i).padStart(2, '0')}:00.000Z`,
  metadata: { artist: `Artist ${i}`, title: `Title ${i}` },
}));

describe('versions (SQLite)', () => {
  const temp = makeTempDir();
  afterAll(() => temp.cleanup());

  it('When --version is asked for, then it names the release, the commit of this clone and the schema each backend reaches', async () => {
    const result = await runCli(['--version']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(`${VERSION} (commit ${HEAD})\ndatabase schema: SQLite ${SQLITE_LATEST}, PostgreSQL ${POSTGRES_LATEST}\n`);
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+$/);
    expect(VERSION).not.toBe('0.1.0');
  });

  it('When the server runs, then /v1/status and the banner name the release, the commit and the schema', async () => {
    const serve = await startServeProcess(['--port', '0', '--db', path.join(temp.dir, 'status.db'), '--offline']);
    try {
      expect(asObject((await request(`${serve.url}/v1/status`)).json)).toMatchObject({
        version: VERSION,
        commit: HEAD,
        schema: { backend: 'sqlite', version: SQLITE_LATEST },
      });
    } finally {
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
    }
    expect(serve.stdout()).toContain(`  version    ${VERSION} (commit ${HEAD}), SQLite schema ${SQLITE_LATEST}\n`);
  });

  it('When the file was upgraded by a newer svc, then start-up refuses it with exit 1 naming both versions, and writes nothing', async () => {
    const dbFile = path.join(temp.dir, 'newer.db');
    const db = openDatabase(dbFile);
    db.pragma(`user_version = ${SQLITE_LATEST + 1}`);
    db.close();
    const result = await runCli(['serve', '--port', '0', '--db', dbFile, '--offline']);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toBe(
      `svc: cannot use database ${dbFile}: its SQLite schema is version ${SQLITE_LATEST + 1}, newer than version ${SQLITE_LATEST}, the newest svc ${VERSION} knows: ` +
        'a newer svc upgraded it. Start that newer svc again, or restore the backup taken before the upgrade (docs/running.md "Upgrades")\n',
    );
    const after = new Database(dbFile, { readonly: true });
    expect(after.pragma('user_version', { simple: true })).toBe(SQLITE_LATEST + 1);
    after.close();
  });

  it("When a database of the previous release's schema is opened, then it is upgraded and every record is kept", async () => {
    const dbFile = path.join(temp.dir, 'previous.db');
    const old = openDatabase(
      dbFile,
      MIGRATIONS.filter((m) => m.version <= PREVIOUS_RELEASE.sqlite),
    );
    const insert = old.prepare('INSERT INTO tracks (received_seq, received_at, stored_at, metadata) VALUES (?, ?, ?, ?)');
    OLD_TRACKS.forEach((track, i) => insert.run(i + 1, track.receivedAt, track.receivedAt, JSON.stringify(track.metadata)));
    expect(old.pragma('user_version', { simple: true })).toBe(PREVIOUS_RELEASE.sqlite);
    old.close();
    const store = await openStore(dbFile, { maxImageBytes: 1_000_000 });
    try {
      expect(store.schema).toEqual({ backend: 'sqlite', version: SQLITE_LATEST });
      const { records } = await store.tracks.history({ limit: 100 });
      expect(records.map((record) => [record.dbid, record.receivedAt, record.metadata.artist, record.metadata.title]).reverse()).toEqual(
        OLD_TRACKS.map((track, i) => [i + 1, track.receivedAt, track.metadata.artist, track.metadata.title]),
      );
    } finally {
      await store.close();
    }
  });
});

describeWithPostgres('versions (PostgreSQL)', () => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(() => database.drop());

  it('When the database was upgraded by a newer svc, then start-up refuses it with exit 1 naming both versions', async () => {
    await (await openStore(database.url, { maxImageBytes: 1000 })).close();
    await database.query("INSERT INTO svc_schema (version, name) VALUES ($1, 'from a newer svc')", [POSTGRES_LATEST + 1]);
    const result = await runCli(['serve', '--port', '0', '--db', database.url, '--offline'], { timeoutMs: 15_000 });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain(
      `: its PostgreSQL schema is version ${POSTGRES_LATEST + 1}, newer than version ${POSTGRES_LATEST}, the newest svc ${VERSION} knows: a newer svc upgraded it.`,
    );
    expect(result.stderr).toMatch(/^svc: cannot use database postgres:\/\//);
    expect(await database.query('SELECT max(version) AS version FROM svc_schema')).toEqual([{ version: POSTGRES_LATEST + 1 }]);
  });

  it("When a database of the previous release's schema is opened, then it is upgraded and every record is kept", async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await migratePostgres(
        client,
        POSTGRES_MIGRATIONS.filter((m) => m.version <= PREVIOUS_RELEASE.postgresql),
      );
      for (const [i, track] of OLD_TRACKS.entries()) {
        await client.query('INSERT INTO tracks (received_seq, received_at, metadata) VALUES ($1, $2, $3)', [
          i + 1,
          track.receivedAt,
          JSON.stringify(track.metadata),
        ]);
      }
    } finally {
      await client.end();
    }
    const store = await openStore(database.url, { maxImageBytes: 1_000_000 });
    try {
      expect(store.schema).toEqual({ backend: 'postgresql', version: POSTGRES_LATEST });
      const { records } = await store.tracks.history({ limit: 100 });
      expect(records.map((record) => [record.receivedAt, record.metadata.artist, record.metadata.title]).reverse()).toEqual(
        OLD_TRACKS.map((track) => [track.receivedAt, track.metadata.artist, track.metadata.title]),
      );
    } finally {
      await store.close();
    }
  });
});
