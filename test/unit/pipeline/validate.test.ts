import type { TrackFields } from '../../../src/domain/track';
import { requireIdentifyingField } from '../../../src/pipeline/validate';

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
