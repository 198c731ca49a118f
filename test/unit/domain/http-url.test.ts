import { hasHttpScheme, isHttpUrl } from '../../../src/domain/http-url';

describe('isHttpUrl', () => {
  it('When the text is an http or https URL, in either case, then it is one', () => {
    for (const url of [
      'http://example.org',
      'https://musicbrainz.org/ws/2',
      'HTTPS://Example.org/a?b=c',
      'https://{lang}.wikipedia.org',
      'http://[::1]:8899/',
    ]) {
      expect(isHttpUrl(url)).toBe(true);
    }
  });

  it('When the scheme is another, missing or alone, or the text holds whitespace, then it is not one', () => {
    for (const text of [
      '',
      'ftp://example.org',
      'mqtt://127.0.0.1',
      'example.org',
      '//example.org',
      'http:example.org',
      'https://',
      ' https://example.org',
      'https://a b',
      'javascript:alert(1)',
    ]) {
      expect(isHttpUrl(text)).toBe(false);
    }
  });
});

describe('hasHttpScheme', () => {
  it('When a parsed URL is http or https, then it has the scheme; any other scheme has not', () => {
    expect(['http://example.org', 'HTTPS://example.org/x'].map((url) => hasHttpScheme(new URL(url)))).toEqual([true, true]);
    expect(['ftp://example.org', 'file:///etc/passwd', 'data:,x', 'ws://127.0.0.1/'].map((url) => hasHttpScheme(new URL(url)))).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});
