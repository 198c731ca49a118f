import { redactedTarget } from '../../../src/outputs/output';

describe('targets as shown', () => {
  it('When a target is shown, then only its scheme and host are (an Icecast mount its path)', () => {
    expect(redactedTarget('https://discord.com/api/webhooks/1/secret-token?wait=true')).toBe('https://discord.com/…');
    expect(redactedTarget('https://user:pass@example.org/')).toBe('https://example.org');
    expect(redactedTarget('http://127.0.0.1:8000/live', true)).toBe('http://127.0.0.1:8000/live');
  });
});
