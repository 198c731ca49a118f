import { parseBaseUrl, parseSeconds } from '../../../src/cli/client-options';
import { describeNetworkError, unreachable } from '../../../src/cli/client';
import { CliError } from '../../../src/cli/exit-codes';
import { extensionFor, imageFileName } from '../../../src/cli/image-files';
import { colorEnabled } from '../../../src/cli/io';

describe('colorEnabled', () => {
  test.each([
    // Rows: env, stdout is a TTY, --json, colour expected (docs/decisions.md "Command-line environment").
    [{}, true, false, true],
    [{}, false, false, false],
    [{}, true, true, false],
    [{ NO_COLOR: '1' }, true, false, false],
    [{ NO_COLOR: '' }, true, false, true],
    [{ NO_COLOR: '' }, false, false, false],
    [{ FORCE_COLOR: '1' }, false, false, true],
    [{ FORCE_COLOR: '3' }, false, false, true],
    [{ FORCE_COLOR: '' }, false, false, false],
    [{ FORCE_COLOR: '' }, true, false, true],
    [{ FORCE_COLOR: '0' }, true, false, false],
    [{ FORCE_COLOR: 'false' }, true, false, false],
    [{ FORCE_COLOR: 'FALSE' }, true, false, false],
    [{ FORCE_COLOR: '1', NO_COLOR: '1' }, false, false, false],
    [{ FORCE_COLOR: '1', NO_COLOR: '1' }, true, false, false],
    [{ FORCE_COLOR: '', NO_COLOR: '1' }, true, false, false],
    [{ FORCE_COLOR: '', NO_COLOR: '' }, false, false, false],
    [{ FORCE_COLOR: '1', NO_COLOR: '' }, false, false, true],
    [{ FORCE_COLOR: '1' }, true, true, false],
  ])('When env is %j, TTY %s, --json %s, then colour is %s', (env, tty, json, expected) => {
    expect(colorEnabled(env, tty, json)).toBe(expected);
  });
});

describe('parseBaseUrl', () => {
  test('When the URL has a path prefix, then it keeps it and ends in /', () => {
    expect(parseBaseUrl('https://radio.example/svc').href).toBe('https://radio.example/svc/');
    expect(parseBaseUrl('http://127.0.0.1:8899').href).toBe('http://127.0.0.1:8899/');
  });

  test.each(['not a url', 'ftp://host/', 'http://u:p@host/', 'http://host/?secret=x', 'http://host/#x'])(
    'When the URL is %j, then it is a usage error',
    (raw) => {
      expect(() => parseBaseUrl(raw)).toThrow(CliError);
      try {
        parseBaseUrl(raw);
      } catch (error) {
        expect((error as CliError).exitCode).toBe(2);
        expect((error as CliError).message).not.toMatch(/:p@|secret=x/);
      }
    },
  );
});

describe('parseSeconds', () => {
  test('accepts positive numbers and refuses the rest', () => {
    expect(parseSeconds('2.5')).toBe(2.5);
    for (const bad of ['0', '-1', '', 'abc', 'Infinity']) expect(() => parseSeconds(bad)).toThrow();
  });
});

describe('image file names', () => {
  const key = 'ab'.repeat(32);
  test.each([
    ['image/jpeg', 'jpg'],
    ['image/png; charset=binary', 'png'],
    ['image/svg+xml', 'svg'],
    ['image/x-whatever', 'bin'],
    ['image/heic', 'heic'],
    ['text/html', 'bin'],
  ])('When the type is %j, then the extension is %j', (type, extension) => {
    expect(extensionFor(type)).toBe(extension);
  });

  test('When the key is a SHA-256 hex digest, then the name is <key>.<ext>, lower case', () => {
    expect(imageFileName(key.toUpperCase(), 'image/webp')).toBe(`${key}.webp`);
  });

  test.each(['../../etc/passwd', 'ab'.repeat(31), `${key}/x`, ''])('When the key is %j, then there is no file name', (bad) => {
    expect(imageFileName(bad, 'image/png')).toBeNull();
  });
});

describe('describeNetworkError', () => {
  test('When fetch wraps a refused connection, then it says "connection refused"', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(describeNetworkError(new TypeError('fetch failed', { cause }))).toBe('connection refused');
  });
});

describe('unreachable', () => {
  test('When fetch refuses the port itself ("bad port"), then it is a usage error, not an unreachable server', () => {
    const url = new URL('http://127.0.0.1:6000/v1/last');
    const error = unreachable(url, new TypeError('fetch failed', { cause: new Error('bad port') }), null, 1000);
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain('port 6000');
  });

  test('When the timeout signal fired, then it says how long it waited', () => {
    const signal = AbortSignal.abort();
    const error = unreachable(new URL('http://127.0.0.1:1234/'), new Error('aborted'), signal, 2500);
    expect(error).toMatchObject({ exitCode: 4, message: 'no answer from http://127.0.0.1:1234 within 2.5 s (see --timeout)' });
  });
});
