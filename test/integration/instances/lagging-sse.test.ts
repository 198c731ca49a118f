import { asObject, postJson, request } from '../../helpers/http';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { openSse } from '../../helpers/sse-client';
import { proxyInFrontOf, type TcpProxy } from '../../helpers/tcp-proxy';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { until } from '../../helpers/eventually';

// docs/several-instances.md "Resuming streams": an instance whose LISTEN connection is held back
// (database.listenUrl through a TCP proxy that stops passing bytes for a moment) lags the
// database. A reader that resumes there with an id from another instance gets the missed records
// from the database, and when the instance hears of them late, nothing is sent again or backwards.

describeWithPostgres('SSE on an instance that lags the database', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let writer: TestServer;
  let lagging: TestServer;

  beforeAll(async () => {
    database = await createTestDatabase();
    const proxied = await proxyInFrontOf(database.url);
    proxy = proxied.proxy;
    writer = await startTestServer({ config: { database: { location: database.url } } });
    lagging = await startTestServer({ config: { database: { location: database.url, listenUrl: proxied.url } } });
  });
  afterAll(async () => {
    await lagging?.close();
    await writer?.close();
    await proxy?.close();
    await database?.drop();
  });

  const submit = async (title: string) => Number(asObject((await postJson(`${writer.url}/v1/remoteinput`, { artist: 'Lag', title })).json).dbid);
  const currentOn = async (t: TestServer) => Number(asObject((await request(`${t.url}/v1/last`)).json).dbid);

  it('When a reader resumes on it while its LISTEN is held back, then ids are strictly increasing, each once', async () => {
    const seen = await submit('Seen');
    await until(async () => (await currentOn(lagging)) === seen);
    proxy.stall();
    const missed = [await submit('Missed 1'), await submit('Missed 2'), await submit('Missed 3')];
    const reader = await openSse(`${lagging.url}/v1/events`, { 'Last-Event-ID': String(seen) });
    try {
      // The replay comes from the database, while the instance itself still shows the older track.
      const replayed = [Number((await reader.next()).id), Number((await reader.next()).id), Number((await reader.next()).id)];
      expect(replayed).toEqual(missed);
      expect(await currentOn(lagging)).toBe(seen);
      proxy.restore();
      // It hears of the three late, makes the last one current, and says nothing about them again.
      await until(async () => (await currentOn(lagging)) === missed[2]);
      expect(await currentOn(lagging)).toBe(missed[2]);
      const next = await submit('Next');
      let event = await reader.next();
      while (Number(event.id) !== next) event = await reader.next();
      expect(reader.events.filter((one) => one.event === 'track').map((one) => Number(one.id))).toEqual([...missed, next]);
    } finally {
      reader.close();
      proxy.restore();
    }
  });
});
