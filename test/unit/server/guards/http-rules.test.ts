import { PassThrough } from 'node:stream';
import { CREDENTIAL_HEADERS, credentialHeader } from '../../../../src/server/guards/credentials';
import { endWithError } from '../../../../src/server/guards/raw-response';
import { SECURITY_HEADERS } from '../../../../src/server/guards/security-headers';

// The one home of each cross-cutting HTTP rule (docs/architecture.md "Layout"): the credential
// reader and the security headers, as the raw answers write them.

const headersOf = (values: Record<string, string>) => ({ get: (name: string) => values[name] ?? '' });

describe('the credential reader', () => {
  it('When both headers are sent, then X-SVC-Client-Auth wins; with only the WNP one, that one; with none, empty', () => {
    expect(credentialHeader(headersOf({ 'X-SVC-Client-Auth': 'svc', 'X-WNP-Client-Auth': 'wnp' }))).toBe('svc');
    expect(credentialHeader(headersOf({ 'X-WNP-Client-Auth': 'wnp' }))).toBe('wnp');
    expect(credentialHeader(headersOf({}))).toBe('');
    expect(CREDENTIAL_HEADERS).toEqual(['X-SVC-Client-Auth', 'X-WNP-Client-Auth']);
  });
});

describe('the security headers', () => {
  it('When an answer is written straight to a socket, then it carries every security header', async () => {
    const socket = new PassThrough();
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise((resolve) => socket.once('finish', resolve));
    endWithError(socket, 'MALFORMED_REQUEST');
    await ended;
    const head = Buffer.concat(chunks).toString('latin1').split('\r\n\r\n')[0] ?? '';
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(head).toContain(`\r\n${name}: ${value}\r\n`);
    socket.destroy();
  });
});
