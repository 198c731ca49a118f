import { adminPassword, basicPassword, callbackBasicPassword } from '../../../src/pipeline/icecast-credentials';

// Icecast's credential carriers (src/pipeline/icecast-credentials.ts), read in one place.

const basic = (text: string) => `Basic ${Buffer.from(text, 'latin1').toString('base64')}`;

describe('Icecast credential carriers', () => {
  it("When a source logs in with Basic, then the password is everything after the user's colon, and no colon is no password", () => {
    expect(basicPassword(basic('source:hack:me'))).toBe('hack:me');
    expect(basicPassword(basic('nocolon'))).toBeNull();
    expect(basicPassword('Bearer abc')).toBeNull();
    expect(basicPassword(undefined)).toBeNull();
  });

  it('When admin.cgi carries ?pass=, then it wins over Basic; without it, Basic decides', () => {
    expect(adminPassword(Buffer.from('from-query'), basic('admin:from-basic'))).toBe('from-query');
    expect(adminPassword(undefined, basic('admin:from-basic'))).toBe('from-basic');
    expect(adminPassword(undefined, undefined)).toBeNull();
  });

  it("When Icecast 2.4's listener callback sends Basic Og== (no credentials in its URL), then no password is given", () => {
    expect(callbackBasicPassword('Basic Og==')).toBe('');
    expect(callbackBasicPassword('')).toBe('');
    expect(callbackBasicPassword(basic('svc:s3cret'))).toBe('s3cret');
    // Latin-1 bytes as they came off the wire, as the credential headers are read.
    expect(Buffer.from(callbackBasicPassword(basic('svc:caf\u00e9')), 'latin1')).toEqual(Buffer.from('caf\u00e9', 'latin1'));
  });
});
