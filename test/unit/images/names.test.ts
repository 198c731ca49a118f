import { nameKey } from '../../../src/images/names';

describe('nameKey', () => {
  it('When names differ only in case, accents, spaces or punctuation, then their keys match', () => {
    expect(nameKey('Björk')).toBe(nameKey('bjork'));
    expect(nameKey('  BJÖRK ')).toBe('bjork');
    expect(nameKey('AC/DC')).toBe(nameKey('ac dc'));
    expect(nameKey('Sigur Rós')).toBe('sigurros');
    expect(nameKey('Daft Punk')).not.toBe(nameKey('Daft Punks'));
  });

  it('When a name is only symbols, then it still has a key of its own', () => {
    expect(nameKey('!!!')).toBe('!!!');
    expect(nameKey('')).toBe('');
  });
});
