import { fieldText, fieldTexts } from '../../../src/domain/track';

describe('fieldText', () => {
  it('When a field holds a string or a number, then it is that text, trimmed', () => {
    const track = { artist: ' Massive Attack ', title: 'Teardrop', year: 1998 };
    expect(fieldText(track, 'artist')).toBe('Massive Attack');
    expect(fieldText(track, 'title')).toBe('Teardrop');
    expect(fieldText(track, 'year')).toBe('1998');
  });

  it('When a field is absent, blank, a list, a map or a boolean, then there is no text', () => {
    const track = { blank: '  ', isrc: ['GBAAA9800343'], enrichment_sources: { album: 'musicbrainz' }, live: true };
    for (const key of ['missing', 'blank', 'isrc', 'enrichment_sources', 'live', 'constructor']) expect(fieldText(track, key)).toBeUndefined();
  });
});

describe('fieldTexts', () => {
  it('When a field holds a list or one string, then it is its texts; blank or absent is none', () => {
    expect(fieldTexts({ isrc: ['GBAAA9800343', 'GBAAA9800344'] }, 'isrc')).toEqual(['GBAAA9800343', 'GBAAA9800344']);
    expect(fieldTexts({ isrc: ' GBAAA9800343 ' }, 'isrc')).toEqual(['GBAAA9800343']);
    expect(fieldTexts({ isrc: ' ' }, 'isrc')).toEqual([]);
    expect(fieldTexts({ bpm: 120 }, 'bpm')).toEqual([]);
    expect(fieldTexts({}, 'isrc')).toEqual([]);
  });
});
