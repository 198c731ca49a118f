import { randomBytes } from 'node:crypto';
import { configSchema } from '../../../src/config/schema';

// The outputs' config rules (docs/outputs.md "Configuration").

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
    // Round three: the webhook token in the path would travel in the clear.
    ['an http:// URL for discord', [{ name: 'a', type: 'discord', url: 'http://discord.com/api/webhooks/1/abc' }], /needs an https:\/\/ URL/],
    ['a broken format', [{ name: 'a', type: 'icecast', url: 'http://h/m', password: 'p', format: '{{title' }], /template/],
  ])('When an output has %s, then the config is refused', (_, outputs, message) => {
    expect(() => validate(outputs)).toThrow(message);
  });
});
