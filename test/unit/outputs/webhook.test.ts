import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { createWebhookOutput } from '../../../src/outputs/webhook';
import { messageOf } from '../../helpers/output-message';
import { startReceiver } from '../../helpers/receiver';

// What one send() puts on the wire to a local receiver: the Standard Webhooks signature (docs/outputs.md "webhook").

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;

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
