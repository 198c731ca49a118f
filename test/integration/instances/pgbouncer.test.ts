import { unusedPort } from '../../cli/cli-process';
import { eventually } from '../../helpers/eventually';
import { asObject, postJson, request } from '../../helpers/http';
import { describeWithPeers } from '../../helpers/peers';
import { startPgBouncer, type PgBouncer } from '../../helpers/pgbouncer';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/several-instances.md "PgBouncer": Debian's real pgbouncer in transaction mode between the
// instances and PostgreSQL. With database.listenUrl direct, ten instances started at once on a
// new database all start (the migration lock holds through the pooler), hear every change, and
// hold few server connections. Without it, the silent LISTEN is noticed and /v1/status says so.

const INSTANCES = 10;
const BOUNCER_POOL = 10;
/** The bench goal (bench/proxies.bench.js): server connections for ten instances through PgBouncer. */
const MAX_SERVER_CONNECTIONS = 25;

describeWithPeers(['pgbouncer', 'postgresql'], 'instances behind PgBouncer in transaction mode', () => {
  let database: TestDatabase;
  let bouncer: PgBouncer;
  let instances: TestServer[] = [];

  beforeEach(async () => {
    database = await createTestDatabase();
    bouncer = await startPgBouncer(database.name, await unusedPort(), BOUNCER_POOL);
  });
  afterEach(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
    instances = [];
    await bouncer?.stop();
    await database?.drop();
  });

  /** Every backend of this database (PgBouncer's server connections, the direct LISTENs), the test's own excepted. */
  const serverConnections = async () =>
    Number(
      (await database.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database.name]))[0]?.n,
    );

  it('When ten instances start at once on a new database through it, with listenUrl direct, then all start, every change reaches every instance, and few server connections are used', async () => {
    const config = { database: { location: bouncer.url, listenUrl: database.url } };
    instances = await Promise.all(Array.from({ length: INSTANCES }, () => startTestServer({ config })));
    const applied = await database.query<{ n: string }>('SELECT count(*) AS n FROM svc_schema');
    expect(Number(applied[0]?.n)).toBeGreaterThan(0);
    // No advisory lock is left behind by the migrations.
    expect(await database.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory'")).toEqual([]);

    let peak = 0;
    for (const [index, instance] of instances.entries()) {
      const answers = await Promise.all(
        Array.from({ length: 5 }, (_, j) => postJson(`${instance.url}/v1/remoteinput`, { artist: `Instance ${index}`, title: `Song ${j}` })),
      );
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
      // Then one alone, the current track everywhere once heard (concurrent ones race for current by arrival).
      const last = await postJson(`${instance.url}/v1/remoteinput`, { artist: `Instance ${index}`, title: 'Last' });
      const dbid = asObject(last.json).dbid;
      peak = Math.max(peak, await serverConnections());
      const currentEverywhere = () => Promise.all(instances.map(async (other) => asObject((await request(`${other.url}/v1/last`)).json).dbid));
      expect(await eventually(currentEverywhere, (seen) => seen.every((one) => one === dbid))).toEqual(instances.map(() => dbid));
    }
    peak = Math.max(peak, await serverConnections());
    process.stderr.write(`pgbouncer: ${INSTANCES} instances held at most ${peak} PostgreSQL connections (pool ${BOUNCER_POOL} + ${INSTANCES} LISTEN)\n`);
    expect(peak).toBeLessThanOrEqual(MAX_SERVER_CONNECTIONS);
    for (const instance of instances) {
      expect(asObject((await request(`${instance.url}/v1/status`)).json)).toEqual(expect.objectContaining({ database: 'ok' }));
      expect(asObject((await request(`${instance.url}/v1/status`)).json).notifications).toBeUndefined();
    }
  }, 90_000);

  it('When LISTEN goes through the transaction-mode pooler too (no listenUrl), then the instances still start and /v1/status says the notifications are silent', async () => {
    const config = { database: { location: bouncer.url } };
    instances = await Promise.all([1, 2, 3].map(() => startTestServer({ config })));
    const status = () => request(`${instances[0]?.url}/v1/status`).then((answer) => asObject(answer.json));
    expect(await eventually(status, (body) => body.notifications === 'silent')).toMatchObject({ notifications: 'silent', database: 'ok' });
    // Writes still work and the instance stays ready: it only hears the others late (each new LISTEN catches up).
    expect((await request(`${instances[0]?.url}/v1/health/ready`)).status).toBe(200);
    expect(instances[0]?.logs.join('\n')).toMatch(/notifications are silent.*database\.listenUrl/);
  }, 60_000);
});
