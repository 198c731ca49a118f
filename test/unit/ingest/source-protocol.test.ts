import { ChunkedBodyError, ChunkedDecoder } from '../../../src/ingest/chunked-body';
import { decodeText, endOfHead, isFromBrowser, normalizeMount, parseRequestHead, queryBytes, splitSong } from '../../../src/ingest/source-protocol';
import { basicPassword } from '../../../src/pipeline/icecast-credentials';

// The pure HTTP side of the Icecast listener (docs/dj-software.md).

test('a SOURCE head as libshout sends it (xiph/Icecast-libshout src/proto_http.c)', () => {
  const wire = Buffer.from(
    'SOURCE /live.ogg HTTP/1.0\r\nAuthorization: Basic c291cmNlOmhhY2ttZQ==\r\nContent-Type: application/ogg\r\nice-name: x\r\n\r\nOggS',
  );
  const end = endOfHead(wire);
  expect(wire.subarray(end).toString()).toBe('OggS');
  const head = parseRequestHead(wire.subarray(0, end));
  expect(head?.method).toBe('SOURCE');
  expect(head?.path).toBe('/live.ogg');
  expect(head?.headers.get('content-type')).toBe('application/ogg');
  expect(basicPassword(head?.headers.get('authorization'))).toBe('hackme');
});

test('heads that are not HTTP requests are refused', () => {
  expect(parseRequestHead(Buffer.from('\x16\x03\x01 tls hello\r\n\r\n'))).toBeNull();
  expect(parseRequestHead(Buffer.from('GET / HTTP/1.1\r\nno colon here\r\n\r\n'))).toBeNull();
  expect(endOfHead(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n'))).toBe(-1);
});

test('Basic auth: any user, the password after the first colon; other schemes give nothing', () => {
  expect(basicPassword(`Basic ${Buffer.from('dj:pa:ss').toString('base64')}`)).toBe('pa:ss');
  expect(basicPassword('Bearer abc')).toBeNull();
  expect(basicPassword(undefined)).toBeNull();
});

test('query values are bytes until their charset is known', () => {
  const params = queryBytes('mode=updinfo&song=Caf%E9+-+Ol%C3%A9&song=second&charset=ISO-8859-1');
  expect(params.get('mode')?.toString()).toBe('updinfo');
  expect(decodeText(params.get('song') ?? Buffer.alloc(0), 'ISO-8859-1')).toBe('Café - OlÃ©');
  // Without a charset: UTF-8 when the bytes are UTF-8, else Latin-1.
  expect(decodeText(Buffer.from('Olé', 'utf8'), undefined)).toBe('Olé');
  expect(decodeText(Buffer.from([0x43, 0x61, 0x66, 0xe9]), undefined)).toBe('Café');
  expect(decodeText(Buffer.from('x'), 'no-such-charset')).toBeNull();
});

test('song is split at the first " - "; without one it is all title', () => {
  expect(splitSong('Daft Punk - One More Time - Radio Edit')).toEqual({ artist: 'Daft Punk', title: 'One More Time - Radio Edit' });
  expect(splitSong('Jingle')).toEqual({ title: 'Jingle' });
  expect(splitSong('AC-DC - T.N.T.')).toEqual({ artist: 'AC-DC', title: 'T.N.T.' });
});

test('a chunked body is taken apart, whatever the pieces (RFC 9112 section 7.1)', () => {
  const wire = Buffer.from('4\r\nOggS\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n');
  for (const size of [1, 2, 5, wire.length]) {
    const decoder = new ChunkedDecoder();
    const out: Buffer[] = [];
    for (let at = 0; at < wire.length; at += size) out.push(...decoder.push(wire.subarray(at, at + size)));
    expect(Buffer.concat(out).toString()).toBe('OggShello');
    expect(decoder.finished).toBe(true);
  }
  expect(() => new ChunkedDecoder().push(Buffer.from('zz\r\n'))).toThrow(ChunkedBodyError);
  expect(() => new ChunkedDecoder().push(Buffer.from('1'.repeat(2000)))).toThrow(/too long/);
});

// Round three (docs/security.md "Icecast sources"): one spelling per mount, and what marks a browser.
describe('normalizeMount', () => {
  it.each([
    ['/live.ogg', '/live.ogg'],
    ['/live.ogg/', '/live.ogg'],
    ['//live.ogg', '/live.ogg'],
    ['/./live.ogg', '/live.ogg'],
    ['/%6Cive.ogg', '/live.ogg'],
    ['/a+b', '/a+b'],
    ['/', '/'],
  ])('When the mount is %s, then it is %s', (path, mount) => expect(normalizeMount(path)).toBe(mount));

  it.each(['live.ogg', '/../etc', '/a/%2e%2e/b', '/a\\b', '/live%0d%0a', '/%ff', `/${'a'.repeat(300)}`, '/\u202eevil'])(
    'When the mount is %j, then it is refused',
    (path) => expect(normalizeMount(path)).toBeNull(),
  );
});

describe('isFromBrowser', () => {
  const head = (headers: Readonly<Record<string, string | undefined>>) =>
    parseRequestHead(
      Buffer.from(
        `GET /admin.cgi HTTP/1.0\r\n${Object.entries(headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('')}`,
      ),
    );
  it.each([
    { Origin: 'null' },
    { Referer: 'http://evil.example/' },
    { 'Sec-Fetch-Site': 'cross-site' },
    { 'Sec-Fetch-Dest': 'image' },
    { 'Upgrade-Insecure-Requests': '1' },
  ])('When a request carries %j, then it is a browser', (headers) =>
    expect(isFromBrowser(head(headers) ?? { method: '', path: '', query: '', headers: new Map() })).toBe(true),
  );
  it.each([{}, { 'User-Agent': 'libshout/2.4.6' }, { 'Sec-Fetch-Mode': 'cors' }])('When a request carries %j, then it is not', (headers) =>
    expect(isFromBrowser(head(headers) ?? { method: '', path: '', query: '', headers: new Map() })).toBe(false),
  );
});
