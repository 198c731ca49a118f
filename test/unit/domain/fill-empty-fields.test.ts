import { fillEmptyFields } from '../../../src/domain/fill-empty-fields';

describe('fillEmptyFields', () => {
  it('When a provider returns fields, then only the empty ones are filled and the provider is recorded', () => {
    const merged = fillEmptyFields(
      { fields: { artist: 'Submitted', album: '' }, sources: {} },
      { artist: 'Provider', album: 'Discovery', date: '2001', genres: [] },
      'musicbrainz',
    );
    expect(merged.fields).toEqual({ artist: 'Submitted', album: 'Discovery', date: '2001' });
    expect(merged.sources).toEqual({ album: 'musicbrainz', date: 'musicbrainz' });
  });

  it('When a second provider offers a field already filled, then the first one keeps it', () => {
    const first = fillEmptyFields({ fields: {}, sources: {} }, { genre: 'House' }, 'musicbrainz');
    const second = fillEmptyFields(first, { genre: 'Disco', artistlongbio: 'Bio' }, 'theaudiodb');
    expect(second.fields).toEqual({ genre: 'House', artistlongbio: 'Bio' });
    expect(second.sources).toEqual({ genre: 'musicbrainz', artistlongbio: 'theaudiodb' });
  });
});
