import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { asObject, postJson, request } from '../../helpers/http';
import { startBlackHole, startReceiver, type BlackHole, type Received, type Receiver } from '../../helpers/receiver';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { expectNothingBefore, expectTwoBackoffs, manualClock, type ManualClock } from '../../helpers/manual-clock';

// Webhook outputs (docs/outputs.md "webhook", "Delivery"): signed per Standard Webhooks and
// checked with its reference verifier (npm standardwebhooks), in dbid order, retried with the
// same webhook-id, Retry-After waited out, and a black-holed target holding up nobody.

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const SUBMIT_SECRET = 'submit-secret-value';

const headersOf = (request: Received): Record<string, string> => ({
  'webhook-id': String(request.headers['webhook-id']),
  'webhook-timestamp': String(request.headers['webhook-timestamp']),
  'webhook-signature': String(request.headers['webhook-signature']),
});

async function withServer(outputs: object[], body: (server: TestServer) => Promise<void>, clock?: ManualClock): Promise<TestServer> {
  const server = await startTestServer({ config: { secret: SUBMIT_SECRET, outputs } as never, outputPollMs: 50, outputClock: clock?.now });
  try {
    await body(server);
  } finally {
    await server.close();
  }
  return server;
}

const submit = (server: TestServer, fields: Record<string, string>) => postJson(`${server.url}/v1/remoteinput`, fields, { 'X-SVC-Client-Auth': SUBMIT_SECRET });

describe('webhook output', () => {
  let receiver: Receiver;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it('When three tracks are submitted, then each arrives once, signed (the standardwebhooks verifier accepts it), in dbid order', async () => {
    await withServer([{ name: 'hook', type: 'webhook', url: `${receiver.url}/hook`, secret: SECRET }], async (server) => {
      const dbids: number[] = [];
      for (const title of ['One', 'Two', 'Three']) dbids.push(Number(asObject((await submit(server, { artist: 'A', title })).json).dbid));
      const arrived = await receiver.waitFor(3);
      const verifier = new Webhook(SECRET);
      const bodies = arrived.map(
        (one) => verifier.verify(one.body.toString('utf8'), headersOf(one)) as { type: string; timestamp: string; data: { dbid: number; title: string } },
      );
      expect(bodies.map((body) => body.type)).toEqual(['track.changed', 'track.changed', 'track.changed']);
      expect(bodies.map((body) => body.data.dbid)).toEqual(dbids);
      expect(bodies.map((body) => body.data.title)).toEqual(['One', 'Two', 'Three']);
      expect(new Set(arrived.map((one) => one.headers['webhook-id'])).size).toBe(3);
      // A tampered body fails the same verifier: the signature covers it.
      expect(() => verifier.verify(arrived[0].body.toString('utf8').replace('One', 'Uno'), headersOf(arrived[0]))).toThrow();
    });
  });

  it('When the target answers 503, 503, then 200, then the message is retried with the same webhook-id and /v1/outputs reports it delivered', async () => {
    receiver.script({ status: 503 }, { status: 503 });
    const clock = manualClock();
    await withServer(
      [{ name: 'hook', type: 'webhook', url: receiver.url, secret: SECRET }],
      async (server) => {
        const failedAt = clock.at;
        const dbid = Number(asObject((await submit(server, { artist: 'A', title: 'Retry' })).json).dbid);
        // Backoff, on the queues' clock: the 1 s base, halved by jitter at most, then 2 s halved at most.
        const arrived = await expectTwoBackoffs(clock, failedAt, receiver);
        expect(arrived.map((one) => one.headers['webhook-id'])).toEqual(Array(3).fill(arrived[0].headers['webhook-id']));
        const status = await eventuallyStatus(server, (output) => output.pending === 0 && output.lastSuccess !== null);
        expect(status).toMatchObject({ name: 'hook', type: 'webhook', state: 'ok', pending: 0, lastSuccess: { dbid } });
        expect(asObject(status.lastError).message).toBe('HTTP 503');
      },
      clock,
    );
  });

  it('When the target answers 429 with Retry-After: 2, then the next try waits those 2 s', async () => {
    receiver.script({ status: 429, headers: { 'retry-after': '2' } });
    const clock = manualClock();
    await withServer(
      [{ name: 'hook', type: 'webhook', url: receiver.url, secret: SECRET }],
      async (server) => {
        const failedAt = clock.at;
        await submit(server, { artist: 'A', title: 'Later' });
        await receiver.waitFor(1);
        // On the queues' clock: not a millisecond before the 2 s the target named, then at once.
        await expectNothingBefore(clock, failedAt + 2000, () => receiver.received.length);
        const arrived = await receiver.waitFor(2);
        expect(arrived[1].headers['webhook-id']).toBe(arrived[0].headers['webhook-id']);
      },
      clock,
    );
  });

  it('When a target answers 400, then the message fails at once (no retry) and the output reads failing', async () => {
    receiver.script({ status: 400 });
    await withServer([{ name: 'hook', type: 'webhook', url: receiver.url, secret: SECRET }], async (server) => {
      await submit(server, { artist: 'A', title: 'Refused' });
      await receiver.waitFor(1);
      const status = await eventuallyStatus(server, (output) => output.state === 'failing');
      expect(status).toMatchObject({ state: 'failing', pending: 0, lastSuccess: null, lastError: { message: 'HTTP 400' } });
      // The marker: a retry of the refused message would reach the target before the next one.
      await submit(server, { artist: 'A', title: 'Marker' });
      const arrived = await receiver.waitFor(2);
      expect(arrived.map((one) => (JSON.parse(one.body.toString('utf8')) as { data: { title: string } }).data.title)).toEqual(['Refused', 'Marker']);
    });
  });

  it('When a target redirects, then the redirect is not followed and the message fails', async () => {
    receiver.script({ status: 307, headers: { location: `${receiver.url}/elsewhere` } });
    await withServer([{ name: 'hook', type: 'webhook', url: receiver.url, secret: SECRET }], async (server) => {
      await submit(server, { artist: 'A', title: 'Moved' });
      const status = await eventuallyStatus(server, (output) => output.state === 'failing');
      expect(asObject(status.lastError).message).toMatch(/^HTTP 307: a redirect/);
      expect(receiver.received.map((one) => one.path)).toEqual(['/']);
    });
  });

  describe('a black-holed target', () => {
    let hole: BlackHole;
    beforeEach(async () => {
      hole = await startBlackHole();
    });
    afterEach(async () => {
      await hole.close();
    });

    it('When one target never answers, then the submission answers and the other target gets its message while the first is still hanging', async () => {
      const outputs = [
        { name: 'hole', type: 'webhook', url: hole.url, secret: SECRET },
        { name: 'good', type: 'webhook', url: receiver.url, secret: SECRET },
      ];
      await withServer(outputs, async (server) => {
        const answer = await submit(server, { artist: 'A', title: 'Isolated' });
        expect(answer.status).toBe(200);
        const [arrived] = await receiver.waitFor(1);
        // The hanging attempt (10 s timeout) is still open: nothing waited for it.
        expect(hole.open()).toBe(1);
        // Its receipt time with a black-holed target is bench/outputs.bench.js's row.
        expect(arrived.body.length).toBeGreaterThan(0);
        // The hanging output's status still answers.
        const statuses = asObject((await request(`${server.url}/v1/outputs`, { headers: { 'X-SVC-Client-Auth': SUBMIT_SECRET } })).json).outputs as object[];
        expect(statuses).toHaveLength(2);
      });
    });
  });

  it('When a record is deleted, then a track.deleted message with its dbid follows, and /v1/outputs and the logs never show a secret', async () => {
    const server = await withServer(
      [{ name: 'hook', type: 'webhook', url: `${receiver.url}/path/with-token-abc123?key=zzz`, secret: SECRET }],
      async (server) => {
        const dbid = Number(asObject((await submit(server, { artist: 'A', title: 'Gone' })).json).dbid);
        await receiver.waitFor(1);
        const deleted = await request(`${server.url}/v1/history/${dbid}`, { method: 'DELETE', headers: { 'X-SVC-Client-Auth': SUBMIT_SECRET } });
        expect(deleted.status).toBe(204);
        const [, second] = await receiver.waitFor(2);
        expect(JSON.parse(second.body.toString('utf8'))).toMatchObject({ type: 'track.deleted', data: { dbid } });
        expect((await request(`${server.url}/v1/outputs`)).status).toBe(403);
        const answer = await request(`${server.url}/v1/outputs`, { headers: { 'X-SVC-Client-Auth': SUBMIT_SECRET } });
        const text = JSON.stringify(answer.json);
        expect(text).toContain(`http://127.0.0.1:${receiver.port}/…`);
        for (const secret of [SECRET, SECRET.slice(6), 'with-token-abc123', 'zzz', SUBMIT_SECRET]) expect(text).not.toContain(secret);
      },
    );
    for (const secret of [SECRET, SECRET.slice(6), 'with-token-abc123', SUBMIT_SECRET]) expect(server.logs.join('\n')).not.toContain(secret);
  });
});

async function eventuallyStatus(server: TestServer, accept: (output: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await request(`${server.url}/v1/outputs`, { headers: { 'X-SVC-Client-Auth': SUBMIT_SECRET } });
    const first = asObject((asObject(answer.json).outputs as unknown[])[0]);
    if (accept(first) || Date.now() > deadline) return first;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
