import { authenticate, secretMatches } from '../../../src/pipeline/authenticate';
import { codeOf } from '../../helpers/app-error-code';

describe('authenticate', () => {
  const credential = (value: string) => ({ bytes: Buffer.from(value, 'utf8') });

  it('When no secret is configured, then anything passes', () => {
    expect(codeOf(() => authenticate(null, ''))).toBeUndefined();
    expect(codeOf(() => authenticate(credential('whatever'), ''))).toBeUndefined();
  });

  it('When a secret is configured, then missing and wrong secrets are told apart', () => {
    expect(codeOf(() => authenticate(null, 's3cret'))).toBe('MISSING_SECRET');
    expect(codeOf(() => authenticate(credential('nope'), 's3cret'))).toBe('INVALID_SECRET');
    expect(codeOf(() => authenticate(credential('s3cret'), 's3cret'))).toBeUndefined();
  });

  it('When the secret is not ASCII, then its UTF-8 bytes are compared (a header arrives as latin1 bytes)', () => {
    const secret = 'pässwörd-🎧';
    const headerAsNodeSeesIt = Buffer.from(secret, 'utf8').toString('latin1');
    expect(codeOf(() => authenticate({ bytes: Buffer.from(headerAsNodeSeesIt, 'latin1') }, secret))).toBeUndefined();
    expect(secretMatches(Buffer.from('passwort'), Buffer.from(secret))).toBe(false);
  });

  it('When lengths differ, then the comparison still answers (no throw from timingSafeEqual)', () => {
    expect(secretMatches(Buffer.from('a'), Buffer.from('a much longer secret'))).toBe(false);
  });
});
