import { asObject, postJson, request } from '../../helpers/http';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { proxyInFrontOf, type TcpProxy } from '../../helpers/tcp-proxy';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { eventually, until } from '../../helpers/eventually';

// Partitions and reconnects (docs/several-instances.md): an instance reaches PostgreSQL through a
// TCP proxy the test refuses or stalls, while another instance, connected directly, stores tracks.

/** Polls `read` until `accept` passes or `timeoutMs` is over; answers the last value and when it passed. */
async function eventuallyPassed<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs: number,
): Promise<{ value: T; passed: boolean; at: number }> {
  const value = await eventually(read, accept, timeoutMs);
  return { value, passed: accept(value), at: Date.now() };
}

const lastOf = async (t: TestServer) => asObject((await request(`${t.url}/v1/last`)).json);
const statusOf = async (t: TestServer) => asObject((await request(`${t.url}/v1/status`)).json);
const submit = async (t: TestServer, title: string) => {
  const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Partition', title });
  expect(res.status).toBe(200);
  return asObject(res.json).dbid as number;
};

describeWithPostgres('an instance cut off from PostgreSQL by a proxy', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let direct: TestServer;
  let behind: TestServer;
  /** Behind the same proxy, with its silence checks every 100 ms and a 1 s limit (store/postgres/liveness.ts; 1.5 s and 2 s in production). */
  let watchful: TestServer;

  beforeAll(async () => {
    database = await createTestDatabase();
    const proxied = await proxyInFrontOf(database.url);
    proxy = proxied.proxy;
    direct = await startTestServer({ config: { database: { location: database.url } } });
    behind = await startTestServer({ config: { database: { location: proxied.url } } });
    watchful = await startTestServer({ config: { database: { location: proxied.url } }, storeLiveness: { intervalMs: 100, timeoutMs: 1000 } });
  });
  afterAll(async () => {
    await watchful?.close();
    await behind?.close();
    await direct?.close();
    await proxy?.close();
    await database?.drop();
  });
  afterEach(() => proxy.restore());

  it('When new connections are refused while another instance stores a track, then once they are allowed the instance is current within 5 s, with no further change', async () => {
    const first = await submit(direct, 'Before the refusal');
    expect(
      (
        await eventuallyPassed(
          () => lastOf(behind),
          (body) => body.dbid === first,
          5000,
        )
      ).passed,
    ).toBe(true);

    // The LISTEN connection stays: the change is heard, but it cannot be read now.
    const notReadYet = () => behind.logs.filter((line) => line.includes('change from another instance not read yet')).length;
    const reportsBefore = notReadYet();
    proxy.refuseNew({ keepListening: true });
    const missed = await submit(direct, 'Stored while refused');
    // The marker: the instance says it heard the change and could not read it yet.
    await until(() => notReadYet() > reportsBefore, 'the failed read is logged', 10_000);
    expect((await lastOf(behind)).dbid).toBe(first);

    proxy.restore();
    const caughtUp = await eventuallyPassed(
      () => lastOf(behind),
      (body) => body.dbid === missed,
      5000,
    );
    expect(caughtUp.value.dbid).toBe(missed);
  });

  it('When the proxy passes no byte, then /v1/status says unavailable within 6 s, and within 5 s of the end it says ok and shows what was stored meanwhile', async () => {
    const before = await submit(direct, 'Before the silence');
    expect(
      (
        await eventuallyPassed(
          () => lastOf(watchful),
          (body) => body.dbid === before,
          5000,
        )
      ).passed,
    ).toBe(true);
    // Its quick checks may have noticed the refusal of the test before: it is back once it says ok.
    expect(
      await eventually(
        () => statusOf(watchful),
        (body) => body.database === 'ok',
        5000,
      ),
    ).toMatchObject({ database: 'ok' });

    const cutAt = Date.now();
    proxy.stall();
    const unavailable = await eventuallyPassed(
      () => statusOf(watchful),
      (body) => body.database === 'unavailable',
      6000,
    );
    // The silence lasts until the instance has said so (the signal) and a track was stored meanwhile.
    const storedMeanwhile = await submit(direct, 'Stored during the silence');
    const restoredAt = Date.now();
    proxy.restore();
    const ok = await eventuallyPassed(
      () => statusOf(watchful),
      (body) => body.database === 'ok',
      5000,
    );
    const current = await eventuallyPassed(
      () => lastOf(watchful),
      (body) => body.dbid === storedMeanwhile,
      5000,
    );

    // The timeline, for the record (docs/several-instances.md shows one).
    process.stderr.write(
      `partition timeline (ms after the cut): unavailable ${unavailable.at - cutAt}, restored ${restoredAt - cutAt}, ok ${ok.at - cutAt}, current ${current.at - cutAt}\n`,
    );
    expect(unavailable.passed).toBe(true);
    expect(ok.passed).toBe(true);
    expect(current.value.dbid).toBe(storedMeanwhile);
  }, 30_000);
});
