import { asObject, postJson } from '../../helpers/http';
import { startReceiver, type Receiver } from '../../helpers/receiver';
import { eventually } from '../../helpers/eventually';
import { rawRequest } from '../../helpers/raw-http';
import { startTestServer } from '../../helpers/test-server';
import { expectNothingBefore, expectTwoBackoffs, manualClock } from '../../helpers/manual-clock';

interface OutputView {
  state: string;
  pending: number;
  lastError: { message: string } | null;
}

// Round three, N4 (docs/security.md "Retries"): a target answering `Retry-After: 0`, a date in
// the past, or Discord's `retry_after: 0` used to be retried at once, 130,966 times a minute for
// one track. Such waits below the 1 s floor mean the normal backoff. The queues run on a clock
// the test moves (test/helpers/manual-clock.ts): a try is due when that clock says so, never sooner.

const SECRET = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');

describe('retry floors', () => {
  let receiver: Receiver;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it.each([
    ['Retry-After: 0', { status: 429, headers: { 'retry-after': '0' } }],
    ['Retry-After in the past', { status: 503, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' } }],
  ])('When a webhook target answers %s, then the next tries wait the normal backoff (at least 0.5 s, then 1 s)', async (_name, reply) => {
    receiver.answer = () => reply;
    const clock = manualClock();
    const server = await startTestServer({
      config: { outputs: [{ name: 'hook', type: 'webhook', url: receiver.url, secret: SECRET }] } as never,
      outputPollMs: 20,
      outputClock: clock.now,
    });
    try {
      const failedAt = clock.at;
      await postJson(`${server.url}/v1/remoteinput`, { artist: 'A', title: 'Flood' });
      // The first backoff is 1 s halved by jitter at most: nothing before 0.5 s, the try by 1 s; the second 2 s, halved at most.
      expect(await expectTwoBackoffs(clock, failedAt, receiver)).toHaveLength(3);
    } finally {
      await server.close();
    }
  });

  it('When Discord answers 429 with retry_after: 0, then the next try waits the normal backoff', async () => {
    receiver.answer = () => ({ status: 429, body: JSON.stringify({ message: 'You are being rate limited.', retry_after: 0, global: false }) });
    const url = `${receiver.url}/api/webhooks/1/token`;
    const clock = manualClock();
    const server = await startTestServer({ config: { outputs: [{ name: 'chat', type: 'discord', url }] } as never, outputPollMs: 20, outputClock: clock.now });
    try {
      const failedAt = clock.at;
      const answer = await postJson(`${server.url}/v1/remoteinput`, { artist: 'A', title: 'Flood' });
      expect(asObject(answer.json).dbid).toBeDefined();
      await receiver.waitFor(1);
      await expectNothingBefore(clock, failedAt + 500, () => receiver.received.length);
      clock.set(failedAt + 1000);
      expect(await receiver.waitFor(2)).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it('When a target keeps answering 429 with Retry-After: 1, then a message gets at most its attempts cap (3 here, 500 by default) and fails', async () => {
    receiver.answer = () => ({ status: 429, headers: { 'retry-after': '1' } });
    const server = await startTestServer({
      config: { outputs: [{ name: 'hook', type: 'webhook', url: receiver.url, secret: SECRET }] } as never,
      outputPollMs: 20,
      outputMaxAttempts: 3,
    });
    try {
      await postJson(`${server.url}/v1/remoteinput`, { artist: 'A', title: 'Capped' });
      await receiver.waitFor(3);
      const readOutput = async () => (JSON.parse((await rawRequest(`${server.url}/v1/outputs`)).text) as { outputs: OutputView[] }).outputs[0];
      const failed = await eventually(readOutput, (output) => output?.state === 'failing');
      expect(failed).toMatchObject({ state: 'failing', pending: 0 });
      expect(failed?.lastError?.message).toContain('gave up after 3 attempts');
      expect(receiver.received).toHaveLength(3);
    } finally {
      await server.close();
    }
  });
});
