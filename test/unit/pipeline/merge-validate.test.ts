import type { TrackFields } from '../../../src/domain/track';
import { fillEmptyFields } from '../../../src/domain/fill-empty-fields';
import { requireIdentifyingField } from '../../../src/pipeline/validate';

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

describe('requireIdentifyingField', () => {
  it.each<TrackFields>([
    { artist: 'A' },
    { title: 'T' },
    { isrc: 'GBDUW0000059' },
    { musicbrainzrecordingid: 'x' },
    { fpcalcfingerprint: 'AQAA', fpcalcduration: 200 },
  ])('accepts %p', (fields) => expect(() => requireIdentifyingField(fields)).not.toThrow());
  it.each<TrackFields>([{}, { album: 'B' }, { fpcalcfingerprint: 'AQAA' }, { fpcalcduration: 200 }, { artist: '' }])('rejects %p', (fields) => {
    expect(() => requireIdentifyingField(fields)).toThrow(/needs at least one of artist, title/);
  });
});
