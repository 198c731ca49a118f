import { asObject, postJson, request } from '../../helpers/http';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// Ten instances on one stock PostgreSQL (max_connections 100): database.poolSize (4) plus one
// LISTEN connection each stays well within it under load, and a change reaches all of them.

const INSTANCES = 10;
const MAX_CONNECTIONS = 60;

describeWithPostgres('ten instances on one PostgreSQL database', () => {
  let database: TestDatabase;
  let instances: TestServer[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    for (let i = 0; i < INSTANCES; i += 1) instances.push(await startTestServer({ config: { database: { location: database.url } } }));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
    instances = [];
    await database?.drop();
  });

  /** svc's own connections to this database now (the test's own are named otherwise). */
  const svcConnections = async () =>
    Number(
      (
        await database.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND application_name IN ('svc', 'svc listen')", [
          database.name,
        ])
      )[0]?.n,
    );

  it(`When all ten take 20 submissions at once, then svc holds at most ${MAX_CONNECTIONS} connections, every submission is stored, and the next change is current on all`, async () => {
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await svcConnections());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const answers = await Promise.all(
      instances.flatMap((instance, i) =>
        Array.from({ length: 20 }, (_, j) => postJson(`${instance.url}/v1/remoteinput`, { artist: `Instance ${i}`, title: `Load ${j}` })),
      ),
    );
    sampling = false;
    await sampler;
    expect(answers.map((answer) => answer.status).filter((status) => status !== 200)).toEqual([]);
    expect(peak).toBeGreaterThan(INSTANCES);
    expect(peak).toBeLessThanOrEqual(MAX_CONNECTIONS);
    process.stderr.write(`ten instances: at most ${peak} svc connections to PostgreSQL under load\n`);

    // The load is caught up first (all ten agree on the current track), then one new change reaches
    // every instance (the guard is for a hang; the time it takes is bench/proxies.bench.js's row).
    const currentOn = async (instance: TestServer) => asObject((await request(`${instance.url}/v1/last`)).json).dbid;
    const settleBy = Date.now() + 20_000;
    while (new Set(await Promise.all(instances.map(currentOn))).size > 1 && Date.now() < settleBy) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const res = await postJson(`${instances[0]?.url}/v1/remoteinput`, { artist: 'Everyone', title: 'Sees this' });
    const guard = Date.now() + 15_000;
    const { dbid } = asObject(res.json);
    const lagging = new Set(instances.slice(1));
    while (lagging.size > 0 && Date.now() < guard) {
      for (const instance of [...lagging]) if (asObject((await request(`${instance.url}/v1/last`)).json).dbid === dbid) lagging.delete(instance);
      if (lagging.size > 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(lagging.size).toBe(0);
  }, 60_000);
});
