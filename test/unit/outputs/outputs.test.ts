import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { configSchema } from '../../../src/config/schema';
import { deliveryOfStatus, nextAttemptDelayMs } from '../../../src/outputs/backoff';
import { createDiscordOutput } from '../../../src/outputs/discord';
import { redactedTarget } from '../../../src/outputs/output';
import { streamTitleTemplate } from '../../../src/outputs/stream-title';
import { createWebhookOutput } from '../../../src/outputs/webhook';
import type { OutputMessage } from '../../../src/store/outputs';
import { startDiscordFake } from '../../fakes/discord';
import { startReceiver } from '../../helpers/receiver';

// The outputs' rules (docs/outputs.md): config rules, retry timing, stream titles and redacted
// targets (pure), and what one send() puts on the wire to a local receiver: the Standard
// Webhooks signature and Discord's embed limits.

const validate = (outputs: unknown) => configSchema.validateSync({ ...configSchema.getDefault(), outputs }, { strict: true });
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;

function messageOf(payload: object, createdAt = Date.now()): OutputMessage {
  return { id: 1, attempts: 0, output: 'out', dbid: 7, kind: 'track.changed', messageId: 'msg_1', payload: JSON.stringify(payload), createdAt };
}

describe('outputs config', () => {
  it('When each type has its keys, then the list is accepted', () => {
    expect(() =>
      validate([
        { name: 'hook', type: 'webhook', url: 'https://example.org/in', secret: SECRET },
        { name: 'discord', type: 'discord', url: 'https://discord.com/api/webhooks/1/abc' },
        { name: 'stream', type: 'icecast', url: 'http://127.0.0.1:8000/live', password: 'p', format: '{{title}}' },
        { name: 'sc', type: 'shoutcast', url: 'http://127.0.0.1:8000', password: 'p', sid: 1 },
        { name: 'ha', type: 'mqtt', url: 'mqtts://broker:8883', topic: 'radio', homeAssistant: true, retryForSeconds: 60 },
      ]),
    ).not.toThrow();
  });

  it.each([
    [
      'a duplicate name',
      [
        { name: 'a', type: 'discord', url: 'https://x/1' },
        { name: 'a', type: 'discord', url: 'https://x/2' },
      ],
      /unique/,
    ],
    ['a name with capitals', [{ name: 'Hook', type: 'discord', url: 'https://x/1' }], /a-z, 0-9/],
    ['an unknown type', [{ name: 'a', type: 'slack', url: 'https://x/1' }], /one of/],
    ['a key of another type', [{ name: 'a', type: 'discord', url: 'https://x/1', password: 'p' }], /has no key "password"/],
    ['a missing key', [{ name: 'a', type: 'webhook', url: 'https://x/1' }], /needs "secret"/],
    ['a secret that is not whsec_', [{ name: 'a', type: 'webhook', url: 'https://x/1', secret: 'plain' }], /whsec_/],
    ['an http URL for mqtt', [{ name: 'a', type: 'mqtt', url: 'http://broker' }], /wrong scheme/],
    ['a broken format', [{ name: 'a', type: 'icecast', url: 'http://h/m', password: 'p', format: '{{title' }], /template/],
  ])('When an output has %s, then the config is refused', (_, outputs, message) => {
    expect(() => validate(outputs)).toThrow(message);
  });
});

describe('retry timing', () => {
  it('When attempts fail, then the wait doubles from 1 s with jitter in [half, whole], capped at 5 min', () => {
    expect([1, 2, 3].map((attempts) => nextAttemptDelayMs(attempts, undefined, 1))).toEqual([1000, 2000, 4000]);
    expect(nextAttemptDelayMs(1, undefined, 0)).toBe(500);
    expect(nextAttemptDelayMs(30, undefined, 1)).toBe(5 * 60 * 1000);
    expect(nextAttemptDelayMs(5, 2000)).toBe(2000);
  });

  it('When a target answers, then 2xx delivers; 5xx, 408, 429 retry; a redirect and other 4xx fail', () => {
    expect(deliveryOfStatus(204).outcome).toBe('delivered');
    expect([500, 503, 408, 429].map((status) => deliveryOfStatus(status).outcome)).toEqual(['retry', 'retry', 'retry', 'retry']);
    expect(deliveryOfStatus(429, 2000)).toMatchObject({ retryAfterMs: 2000 });
    expect([301, 307, 400, 401, 404, 410].map((status) => deliveryOfStatus(status).outcome)).toEqual(Array(6).fill('failed'));
  });
});

describe('webhook signature', () => {
  it('When a message is sent, then the standardwebhooks reference verifier accepts it', async () => {
    const receiver = await startReceiver();
    try {
      const output = createWebhookOutput({ name: 'hook', url: `${receiver.url}/hook`, secret: SECRET });
      const delivery = await output.send(messageOf({ dbid: 7, title: 'Ünïcode ✓' }, Date.UTC(2026, 10, 23)), AbortSignal.timeout(5000));
      expect(delivery.outcome).toBe('delivered');
      const [{ body, headers }] = receiver.received;
      const signed = {
        'webhook-id': String(headers['webhook-id']),
        'webhook-timestamp': String(headers['webhook-timestamp']),
        'webhook-signature': String(headers['webhook-signature']),
      };
      expect(signed['webhook-id']).toBe('msg_1');
      expect(new Webhook(SECRET).verify(body.toString('utf8'), signed)).toEqual({
        type: 'track.changed',
        timestamp: '2026-11-23T00:00:00.000Z',
        data: { dbid: 7, title: 'Ünïcode ✓' },
      });
    } finally {
      await receiver.close();
    }
  });
});

describe('discord embed', () => {
  it('When fields are long, then each is cut to its limit (on a character boundary) and the whole stays within 6000', async () => {
    const discord = await startDiscordFake();
    try {
      // No image store: the message names no cover.
      const output = createDiscordOutput({ name: 'channel', url: discord.webhookUrl }, { get: () => Promise.resolve(null) });
      const send = (payload: object) => output.send(messageOf(payload), AbortSignal.timeout(5000));
      expect((await send({ dbid: 1, title: 'x'.repeat(300), artist: 'y'.repeat(300), album: 'z'.repeat(9000), date: '2001-02-03' })).outcome).toBe('delivered');
      expect((await send({ dbid: 2, title: '🎵'.repeat(300) })).outcome).toBe('delivered');
      const [long, emoji] = discord.posted.map((message) => message.embeds[0]);
      expect(long.title).toHaveLength(256);
      expect(long.author?.name).toHaveLength(256);
      expect(long.description?.length).toBeLessThanOrEqual(4096);
      expect((long.title?.length ?? 0) + (long.author?.name?.length ?? 0) + (long.description?.length ?? 0)).toBeLessThanOrEqual(6000);
      expect(emoji.title).toBe(`${'🎵'.repeat(127)}…`);
    } finally {
      await discord.close();
    }
  });
});

describe('stream titles and targets', () => {
  it('When a field is missing, then no separator dangles; a format names any field', () => {
    const title = streamTitleTemplate();
    expect(title({ dbid: 1, artist: 'A', title: 'T' })).toBe('A - T');
    expect(title({ dbid: 1, title: 'T' })).toBe('T');
    expect(title({ dbid: 1, artist: 'A' })).toBe('A');
    expect(streamTitleTemplate('{{title}} ({{year}})')({ dbid: 1, title: 'T', date: '1999-01-01' })).toBe('T (1999)');
  });

  it('When a target is shown, then only its scheme and host are (an Icecast mount its path)', () => {
    expect(redactedTarget('https://discord.com/api/webhooks/1/secret-token?wait=true')).toBe('https://discord.com/…');
    expect(redactedTarget('https://user:pass@example.org/')).toBe('https://example.org');
    expect(redactedTarget('http://127.0.0.1:8000/live', true)).toBe('http://127.0.0.1:8000/live');
  });
});
