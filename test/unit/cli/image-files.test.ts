import { imageFileName } from '../../../src/cli/image-files';

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
    expect(imageFileName(key, type)).toBe(`${key}.${extension}`);
  });

  test('When the key is a SHA-256 hex digest, then the name is <key>.<ext>, lower case', () => {
    expect(imageFileName(key.toUpperCase(), 'image/webp')).toBe(`${key}.webp`);
  });

  test.each(['../../etc/passwd', 'ab'.repeat(31), `${key}/x`, ''])('When the key is %j, then there is no file name', (bad) => {
    expect(imageFileName(bad, 'image/png')).toBeNull();
  });
});
