import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { INSERT_LOCK } from '../../../src/store/postgres/tracks';
import { until } from '../../helpers/eventually';
import { asObject, postJson, request, type JsonResponse } from '../../helpers/http';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { startServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';

// docs/channels.md "Order across channels": on PostgreSQL the insert lock is per channel, so two
// channels written at the same moment never wait on each other. A separate client holds channel
// FM's insert lock; svc's insert on FM is then open (its channel's play lock taken) and waits for
// it, which pg_locks shows; a play on Web is stored and answered meanwhile.

const HANG_GUARD_MS = 30_000;

/** Advisory locks of svc's backends (not `own`) on the key pair `key1`/`key2` (int4s, as pg_locks shows them: unsigned). */
const LOCKS_SQL = `SELECT pid, granted FROM pg_locks
  WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND classid::bigint = ($1::bigint & 4294967295) AND objid::bigint = ($2::bigint & 4294967295) AND objsubid = 2 AND pid <> $3`;
/** The channel's play lock (store/postgres/plays.ts lockChannel: one bigint key, split into classid and objid). */
const PLAY_LOCK_SQL = `SELECT pid FROM pg_locks
  WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND pid = $2
    AND ((classid::bigint << 32) | objid::bigint) = hashtext('svc-play:' || $1::text)::bigint`;

describeWithPostgres('the insert lock is per channel', () => {
  let database: TestDatabase;
  let temp: ReturnType<typeof makeTempDir>;
  let instance: ServeProcess;
  let holder: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    temp = makeTempDir();
    fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ channels: [{ name: 'FM' }, { name: 'Web' }] }));
    instance = await startServeProcess(['--port', '0', '--db', database.url, '--offline'], {}, temp.dir);
    holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
  }, 60_000);
  afterAll(async () => {
    await holder?.end().catch(() => undefined);
    instance?.child.kill('SIGKILL');
    await instance?.exited;
    await database?.drop();
    temp?.cleanup();
  });

  it(
    "When channel FM's insert transaction is held open, then a play on channel Web is stored and answered meanwhile, and FM's after it",
    async () => {
      // Both channels have a play, so each view reads its own gaps below the next.
      for (const channel of ['FM', 'Web'])
        expect((await postJson(`${instance.url}/v1/remoteinput`, { artist: 'A', title: `first ${channel}`, channel })).status).toBe(200);
      const ownPid = Number((await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
      const fmKey = Number((await holder.query<{ h: number }>("SELECT hashtext('FM') AS h")).rows[0]?.h);
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1, hashtext($2::text))', [INSERT_LOCK, 'FM']);

      let fmAnswer: JsonResponse | undefined;
      const fm = postJson(`${instance.url}/v1/remoteinput`, { artist: 'A', title: 'held', channel: 'FM' }).then((answer) => (fmAnswer = answer));
      // The signal: svc's backend waits for FM's insert lock, inside its transaction (FM's play lock is its own).
      let waiter = 0;
      await until(async () => {
        const rows = (await holder.query<{ pid: number; granted: boolean }>(LOCKS_SQL, [INSERT_LOCK, fmKey, ownPid])).rows;
        waiter = rows.find((row) => !row.granted)?.pid ?? 0;
        return waiter !== 0;
      }, "svc's insert on FM waits for FM's insert lock");
      expect((await holder.query(PLAY_LOCK_SQL, ['FM', waiter])).rows).toHaveLength(1);

      const web = await postJson(`${instance.url}/v1/remoteinput`, { artist: 'B', title: 'meanwhile', channel: 'Web' });
      expect(web.status).toBe(200);
      const webDbid = Number(asObject(web.json).dbid);
      expect(asObject((await request(`${instance.url}/v1/last?channel=Web`)).json)).toMatchObject({ dbid: webDbid, title: 'meanwhile', channel: 'Web' });
      // FM's insert is still the one waiting: Web did not go through it.
      expect(fmAnswer).toBeUndefined();
      expect((await holder.query<{ granted: boolean }>(LOCKS_SQL, [INSERT_LOCK, fmKey, ownPid])).rows).toEqual([{ pid: waiter, granted: false }]);

      await holder.query('COMMIT');
      const held = await fm;
      expect(held.status).toBe(200);
      const fmDbid = Number(asObject(held.json).dbid);
      expect(fmDbid).toBeGreaterThan(webDbid);
      expect(asObject((await request(`${instance.url}/v1/last?channel=FM`)).json)).toMatchObject({ dbid: fmDbid, title: 'held', channel: 'FM' });
      expect(asObject((await request(`${instance.url}/v1/last?channel=Web`)).json)).toMatchObject({ dbid: webDbid, channel: 'Web' });
    },
    HANG_GUARD_MS,
  );
});
