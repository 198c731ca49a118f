import { delayingEnricher } from '../../helpers/enrichers';
import { asObject, postJson, request } from '../../helpers/http';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// Idempotency-Key (docs/limits-and-load.md "Idempotency and retries"): before, a client that retried after
// a 502, as it should, stored the play twice. Enrichment is slowed so a repeat arrives while
// the first request still runs.

const submit = (server: TestServer, key: string, body: Record<string, unknown>) => postJson(`${server.url}/v1/remoteinput`, body, { 'Idempotency-Key': key });
const dbidOf = (response: { json: unknown }) => asObject(response.json).dbid;
const storedCount = async (server: TestServer) => (asObject((await request(`${server.url}/v1/history?limit=1000`)).json).tracks as unknown[]).length;

describe('Idempotency-Key on SQLite', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ plan: [[delayingEnricher(() => 300, { album: 'Slow' })]] });
  });
  afterAll(() => t.close());

  it('When the same key comes twice at once and again after a restart, then all answers carry one dbid and one record is stored', async () => {
    const body = { artist: 'Idem', title: 'Potent' };
    const [first, concurrent] = await Promise.all([submit(t, 'key-1', body), submit(t, 'key-1', body)]);
    expect([first.status, concurrent.status]).toEqual([200, 200]);
    expect(dbidOf(concurrent)).toBe(dbidOf(first));
    expect(concurrent.json).toEqual(first.json);
    await t.restart();
    const later = await submit(t, 'key-1', body);
    expect([later.status, dbidOf(later)]).toEqual([200, dbidOf(first)]);
    expect(await storedCount(t)).toBe(1);
  });

  it('When a key is reused with another body, then the answer is 422 and nothing more is stored', async () => {
    const before = await storedCount(t);
    expect((await submit(t, 'key-2', { artist: 'A', title: 'One' })).status).toBe(200);
    const reused = await submit(t, 'key-2', { artist: 'A', title: 'Two' });
    expect(reused.status).toBe(422);
    expect(reused.json).toEqual({ error: 'Idempotency-Key reused with a different request' });
    expect(await storedCount(t)).toBe(before + 1);
  });

  it('When the first request with a key fails, then a retry with it runs again', async () => {
    expect((await submit(t, 'key-3', { album: 'no identifying field' })).status).toBe(400);
    expect((await submit(t, 'key-3', { album: 'no identifying field' })).status).toBe(400);
    const fixed = await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Fixed' }, { 'Idempotency-Key': 'key-4' });
    expect(fixed.status).toBe(200);
  });

  it('When DELETE /v1/history/<dbid> is repeated with its key, then the repeat gets the same 204', async () => {
    const dbid = String(dbidOf(await submit(t, 'key-5', { artist: 'To', title: 'Delete' })));
    const remove = () => request(`${t.url}/v1/history/${dbid}`, { method: 'DELETE', headers: { 'Idempotency-Key': 'delete-5' } });
    expect((await remove()).status).toBe(204);
    expect((await remove()).status).toBe(204);
    expect((await request(`${t.url}/v1/history/${dbid}`, { method: 'DELETE' })).status).toBe(404);
  });
});

describeWithPostgres('Idempotency-Key across two instances on PostgreSQL', () => {
  let database: TestDatabase;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    database = await createTestDatabase();
    const plan = [[delayingEnricher(() => 300, { album: 'Slow' })]];
    a = await startTestServer({ dbFile: database.url, plan });
    b = await startTestServer({ dbFile: database.url, plan });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await database.drop();
  });

  it('When the same key reaches both instances at once, then both answer with one dbid and one record is stored', async () => {
    const body = { artist: 'Two', title: 'Instances' };
    const [viaA, viaB] = await Promise.all([submit(a, 'pg-key', body), submit(b, 'pg-key', body)]);
    expect([viaA.status, viaB.status]).toEqual([200, 200]);
    expect(dbidOf(viaB)).toBe(dbidOf(viaA));
    expect(await database.query('SELECT dbid FROM tracks')).toHaveLength(1);
    expect((await submit(b, 'pg-key', { ...body, title: 'Other' })).status).toBe(422);
  });
});
