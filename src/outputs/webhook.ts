import { createHmac } from 'node:crypto';
import type { OutputMessage } from '../store/outputs';
import { sendHttp } from './http-send';
import { redactedTarget, type Output } from './output';

// `webhook` (docs/outputs.md "webhook"): a POST signed as the Standard Webhooks specification
// (standardwebhooks.com) says: `webhook-id` (the same on every retry), `webhook-timestamp`
// (seconds, this attempt) and `webhook-signature` `v1,<base64 HMAC-SHA256 of id.timestamp.body>`
// keyed with the base64 part of the `whsec_` secret. Sent after enrichment, in dbid order.

export interface WebhookConfig {
  name: string;
  url: string;
  secret: string;
}

export function createWebhookOutput(config: WebhookConfig): Output {
  const key = Buffer.from(config.secret.replace(/^whsec_/, ''), 'base64');
  return {
    name: config.name,
    type: 'webhook',
    feeds: { settled: 'track.changed', deleted: 'track.deleted' },
    latestOnly: false,
    target: redactedTarget(config.url),
    async send(message, signal) {
      const body = webhookBody(message);
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = {
        'content-type': 'application/json',
        'webhook-id': message.messageId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(key, message.messageId, timestamp, body),
      };
      const { delivery } = await sendHttp(config.url, { method: 'POST', headers, body }, signal);
      return delivery;
    },
    close: () => Promise.resolve(),
  };
}

/** `{type, timestamp, data}`: the same bytes on every retry (built from the stored message). */
function webhookBody(message: Pick<OutputMessage, 'kind' | 'createdAt' | 'payload'>): string {
  const type = message.kind === 'track.deleted' ? 'track.deleted' : 'track.changed';
  return `{"type":"${type}","timestamp":${JSON.stringify(new Date(message.createdAt).toISOString())},"data":${message.payload}}`;
}

function signWebhook(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
