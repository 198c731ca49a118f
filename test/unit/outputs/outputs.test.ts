import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { configSchema } from '../../../src/config/schema';
import { backoffMs, deliveryOfStatus, MAX_RETRY_MS, nextAttemptDelayMs } from '../../../src/outputs/backoff';
import { buildEmbed, cutText } from '../../../src/outputs/discord';
import { discoveryConfigs } from '../../../src/outputs/mqtt';
import { redactedTarget } from '../../../src/outputs/output';
import { streamTitleTemplate } from '../../../src/outputs/stream-title';
import { signWebhook, webhookBody } from '../../../src/outputs/webhook';

// The pure parts of the outputs (docs/outputs.md): config rules, retry timing, the Standard
// Webhooks signature, Discord's embed limits, stream titles, redacted targets.

const validate = (outputs: unknown) => configSchema.validateSync({ ...configSchema.getDefault(), outputs }, { strict: true });
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;

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
    expect([1, 2, 3].map((attempts) => backoffMs(attempts, 1))).toEqual([1000, 2000, 4000]);
    expect(backoffMs(1, 0)).toBe(500);
    expect(backoffMs(30, 1)).toBe(MAX_RETRY_MS);
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
  it('When a message is signed, then the standardwebhooks reference verifier accepts it', () => {
    const message = { kind: 'track.changed' as const, createdAt: Date.UTC(2026, 10, 23), payload: '{"dbid":7,"title":"Ünïcode ✓"}' };
    const body = webhookBody(message);
    expect(JSON.parse(body)).toEqual({ type: 'track.changed', timestamp: '2026-11-23T00:00:00.000Z', data: { dbid: 7, title: 'Ünïcode ✓' } });
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signWebhook(Buffer.from(SECRET.slice(6), 'base64'), 'msg_1', timestamp, body);
    expect(new Webhook(SECRET).verify(body, { 'webhook-id': 'msg_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature })).toBeTruthy();
  });
});

describe('discord embed', () => {
  it('When fields are long, then each is cut to its limit and the whole stays within 6000', () => {
    const embed = buildEmbed({ dbid: 1, title: 'x'.repeat(300), artist: 'y'.repeat(300), album: 'z'.repeat(9000), date: '2001-02-03' }, 'cover.jpg');
    expect(embed.title).toHaveLength(256);
    expect(embed.author?.name).toHaveLength(256);
    expect(embed.description?.length).toBeLessThanOrEqual(4096);
    expect((embed.title?.length ?? 0) + (embed.author?.name.length ?? 0) + (embed.description?.length ?? 0)).toBeLessThanOrEqual(6000);
    expect(embed.image).toEqual({ url: 'attachment://cover.jpg' });
    expect(cutText('🎵🎵🎵', 4)).toBe('🎵…');
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

  it('When Home Assistant discovery is on, then a sensor and an image entity share one device', () => {
    const [[sensorTopic, sensor], [imageTopic, image]] = discoveryConfigs('my-radio', 'radio') as [[string, string], [string, string]];
    expect(sensorTopic).toBe('homeassistant/sensor/svc_my_radio/now_playing/config');
    expect(imageTopic).toBe('homeassistant/image/svc_my_radio/cover/config');
    expect(JSON.parse(sensor)).toMatchObject({
      state_topic: 'radio/now_playing',
      availability_topic: 'radio/status',
      device: { identifiers: ['svc_my_radio'] },
    });
    expect(JSON.parse(image)).toMatchObject({ image_topic: 'radio/cover', device: { identifiers: ['svc_my_radio'] } });
  });
});
