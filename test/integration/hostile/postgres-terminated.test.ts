import { asObject, postJson, request } from '../../helpers/http';
import { until } from '../../helpers/eventually';
import { describeWithPostgres, createTestDatabase, type TestDatabase } from '../../helpers/postgres';
import { startServeProcess, stopServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';

// Issue 54 H2: one pg_terminate_backend while 20 (or 50) writers post crashed `svc serve` with an
// unhandled 'error' event (a pooled connection that was checked out, between two statements of a
// transaction, had no listener). Every connection error is handled: the writes in flight fail
// with a clear status, the instance reports the database unavailable while it is, retries, and
// never exits.

describeWithPostgres('PostgreSQL ends every svc connection under load (issue 54 H2)', () => {
  let database: TestDatabase;
  let serve: ServeProcess | undefined;
  const temp = makeTempDir('svc-pg-terminate-');

  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    if (serve) await stopServeProcess(serve);
    serve = undefined;
    await database.drop();
  });
  afterAll(() => temp.cleanup());

  const terminateSvc = () =>
    database.query<{ ended: boolean }>(
      "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'svc%'",
    );

  it.each([20, 50])(
    'When every svc connection is terminated five times while %i writers post, then svc keeps running and writes again',
    async (writers) => {
      serve = await startServeProcess(['--port', '0', '--db', database.url, '--offline'], {}, temp.dir);
      const running = serve;
      let exited: number | null | undefined;
      void running.exited.then((code) => (exited = code));
      const statuses = new Map<number, number>();
      let stop = false;
      let sent = 0;
      const posting = Array.from({ length: writers }, async (_, writer) => {
        for (let take = 0; !stop && exited === undefined; take += 1) {
          sent += 1;
          try {
            const res = await postJson(`${running.url}/v1/remoteinput`, { artist: `Writer ${writer}`, title: `Take ${take}` });
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          } catch {
            statuses.set(0, (statuses.get(0) ?? 0) + 1);
          }
        }
      });
      // Terminate, under load, a few times over: each round waits for writes to be acknowledged again.
      for (let round = 0; round < 5 && exited === undefined; round += 1) {
        const before = statuses.get(200) ?? 0;
        await until(() => (statuses.get(200) ?? 0) > before + writers || exited !== undefined, 'writes were acknowledged again', 60_000);
        await terminateSvc();
      }
      await until(() => (statuses.get(200) ?? 0) > writers * 6 || exited !== undefined, 'writes were acknowledged after the last termination', 60_000);
      stop = true;
      await Promise.all(posting);
      expect({ exited, stderr: exited === undefined ? '' : running.stderr() }).toEqual({ exited: undefined, stderr: '' });
      expect(sent).toBeGreaterThan(writers * 6);
      // A write refused while the database was gone is a 503, never a dropped connection or a 500.
      expect([...statuses.keys()].filter((status) => status !== 200 && status !== 503)).toEqual([]);
      // The last termination may still hold the store unavailable (503): it comes back by itself.
      await until(
        async () => (await postJson(`${running.url}/v1/remoteinput`, { artist: 'After', title: 'The faults' })).status === 200,
        'a write accepted after the faults',
        60_000,
      );
      expect(asObject((await request(`${running.url}/v1/last`)).json).artist).toBe('After');
      // A hang guard for the whole run of faults, not a goal.
    },
    120_000,
  );
});
