import type { AppContext } from '../../../../src/server/context';
import { parseBody } from '../../../../src/server/middleware/body';
import { idempotent, type IdempotencyOptions } from '../../../../src/server/middleware/idempotency';
import { openSqliteStore } from '../../../../src/store/open-store';
import type { IdempotencyStore } from '../../../../src/store/idempotency';
import type { Store } from '../../../../src/store/store';
import { until } from '../../../helpers/eventually';
import { rawRequest } from '../../../helpers/raw-http';
import { serveMiddleware, type MiddlewareApp } from '../../../helpers/middleware-app';

// src/server/middleware/idempotency.ts alone, on a real SQLite store: Idempotency-Key on writes
// (docs/limits-and-load.md "Idempotency and retries"; the IETF httpapi draft).

const SECRET = 's3cret';
/** Long enough that a repeat waiting for a running first request never gives up in a test. */
const LONG_WAIT_MS = 20_000;

describe('idempotent, the Idempotency-Key middleware', () => {
  let store: Store;
  const apps: MiddlewareApp[] = [];
  let runs = 0;
  let status = 201;
  let fail = false;
  let gate: Promise<void> | undefined;

  /** The route: counts its runs, answers its run number, or fails, or waits at the gate. */
  const route = async (ctx: AppContext) => {
    runs += 1;
    const run = runs;
    await gate;
    if (fail) throw new Error('the write failed');
    ctx.status = status;
    ctx.body = { run };
  };

  /** Claims looked up so far: a repeat that waits looks again and again. */
  let claims = 0;
  const serve = async (options: Partial<IdempotencyOptions> = {}, handler = route) => {
    const keys: IdempotencyStore = {
      claim: (...args) => {
        claims += 1;
        return store.idempotency.claim(...args);
      },
      answer: (key, answerStatus, body) => store.idempotency.answer(key, answerStatus, body),
      forget: (key) => store.idempotency.forget(key),
      fingerprintKey: () => store.idempotency.fingerprintKey(),
    };
    const app = await serveMiddleware([...parseBody(10_000), idempotent(keys, { waitMs: LONG_WAIT_MS, leaseMs: 60_000, secret: SECRET, ...options })], handler);
    apps.push(app);
    return app.url;
  };
  const post = (url: string, key: string, body = '{"secret":"s3cret","title":"T"}') =>
    rawRequest(`${url}/v1/remoteinput`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key }, body });

  beforeAll(() => {
    store = openSqliteStore(':memory:', { maxImageBytes: 1024 * 1024 });
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await store.close();
  });
  beforeEach(() => {
    runs = 0;
    status = 201;
    fail = false;
    gate = undefined;
  });

  it('When a write carries no key, then it runs every time', async () => {
    const url = await serve();
    await rawRequest(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    await rawRequest(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(runs).toBe(2);
  });

  it('When the key is not 1 to 255 printable ASCII characters, then 400 and nothing runs', async () => {
    const url = await serve();
    const res = await post(url, 'x'.repeat(256));
    expect([res.status, JSON.parse(res.text)]).toEqual([400, { error: 'Invalid Idempotency-Key: expected 1 to 255 printable ASCII characters' }]);
    expect(runs).toBe(0);
  });

  it('When a request is repeated with its key, then the first 2xx answer comes back and the write runs once', async () => {
    const url = await serve();
    const first = await post(url, 'key-repeat');
    const again = await post(url, 'key-repeat');
    expect([first.status, first.text]).toEqual([201, '{"run":1}']);
    expect([again.status, again.text]).toEqual([201, '{"run":1}']);
    expect(again.headers['content-type']).toMatch(/^application\/json/);
    expect(runs).toBe(1);
  });

  it('When the key comes again with another request, then 422', async () => {
    const url = await serve();
    await post(url, 'key-other');
    const res = await post(url, 'key-other', '{"secret":"s3cret","title":"Other"}');
    expect([res.status, JSON.parse(res.text)]).toEqual([422, { error: 'Idempotency-Key reused with a different request' }]);
    expect(runs).toBe(1);
  });

  it('When the secret is wrong, then 403 before the key is looked up (a guess learns nothing of a kept answer)', async () => {
    const url = await serve();
    await post(url, 'key-guarded');
    const res = await post(url, 'key-guarded', '{"secret":"guess","title":"T"}');
    expect([res.status, JSON.parse(res.text)]).toEqual([403, { error: 'Invalid secret' }]);
  });

  it('When the first request fails or answers no 2xx, then the key is freed and a retry runs again', async () => {
    const url = await serve();
    fail = true;
    expect((await post(url, 'key-fails')).status).toBe(500);
    fail = false;
    expect((await post(url, 'key-fails')).text).toBe('{"run":2}');
    status = 400;
    expect((await post(url, 'key-refused')).status).toBe(400);
    status = 201;
    expect((await post(url, 'key-refused')).text).toBe('{"run":4}');
  });

  it('When a repeat comes while the first still runs, then it waits for the first answer; with no wait left it is 409', async () => {
    const url = await serve();
    const impatient = await serve({ waitMs: 0 });
    let release = () => undefined as void;
    gate = new Promise<void>((resolve) => (release = resolve));
    const first = post(url, 'key-running');
    await until(() => runs === 1, 'the first request runs');
    const refused = await post(impatient, 'key-running');
    expect([refused.status, JSON.parse(refused.text)]).toEqual([409, { error: 'A request with this Idempotency-Key is still being processed' }]);
    const before = claims;
    const repeat = post(url, 'key-running');
    // The repeat found the key taken and looked again: it is waiting.
    await until(() => claims >= before + 2, 'the repeat waits for the first answer');
    release();
    expect((await first).text).toBe('{"run":1}');
    expect((await repeat).text).toBe('{"run":1}');
    expect(runs).toBe(1);
  });

  it('When another svc process stored the record and never answered, then a repeat here gets the stored record at once', async () => {
    let stored = 0;
    let hangUp = () => undefined as void;
    const hanging = new Promise<void>((resolve) => (hangUp = resolve));
    // The first process stores its record under the key (in the record's own transaction), then hangs.
    const storing = await serve({}, async () => {
      const record = await store.tracks.insert({
        receivedSeq: await store.tracks.nextReceivedSeq(),
        receivedAt: new Date().toISOString(),
        metadata: { title: 'T' },
        idempotencyKey: 'key-stored',
      });
      stored = record.dbid;
      await hanging;
    });
    const other = await serve({ storedAnswer: (dbid) => Promise.resolve(`{"dbid":${dbid},"from":"store"}`) });
    void post(storing, 'key-stored').catch(() => undefined);
    await until(() => stored > 0, 'the first process stored its record');
    const res = await post(other, 'key-stored');
    expect([res.status, JSON.parse(res.text)]).toEqual([200, { dbid: stored, from: 'store' }]);
    expect(runs).toBe(0);
    hangUp();
  });
});
