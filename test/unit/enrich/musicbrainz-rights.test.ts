import { decodeRecording, decodeRelease } from '../../../src/enrich/musicbrainz-decode';
import { rightsFields } from '../../../src/enrich/musicbrainz';

// Rights data from MusicBrainz (docs/play-log.md "Rights data"): the shapes are those of WS/2
// JSON answers: a release lookup with `labels` (label-info with catalog-number) and a barcode,
// and a recording lookup with `work-rels+work-level-rels+artist-rels` (a performance relation to
// a work, which carries its ISWCs and its own artist relations).

const recording = decodeRecording({
  id: '9b2d1e7c-3f4a-4b5c-8d6e-7f8091a2b3c4',
  title: 'Song',
  relations: [
    {
      type: 'performance',
      'target-type': 'work',
      work: {
        id: '1a2b3c4d-0000-4000-8000-000000000001',
        title: 'Song',
        iswcs: ['T-123.456.789-0'],
        relations: [
          { type: 'composer', 'target-type': 'artist', artist: { id: '1a2b3c4d-0000-4000-8000-000000000002', name: 'Ana María Pérez' } },
          { type: 'lyricist', 'target-type': 'artist', artist: { id: '1a2b3c4d-0000-4000-8000-000000000003', name: 'DJ von Köln' } },
          { type: 'composer', 'target-type': 'artist', artist: { id: '1a2b3c4d-0000-4000-8000-000000000004', name: 'Bo' } },
          { type: 'arranger', 'target-type': 'artist', artist: { id: '1a2b3c4d-0000-4000-8000-000000000005', name: 'Not A Writer' } },
        ],
      },
    },
    { type: 'producer', 'target-type': 'artist', artist: { id: '1a2b3c4d-0000-4000-8000-000000000006', name: 'Producer' } },
  ],
});

const release = decodeRelease({
  id: '5c0f4c9e-5a8b-4e3a-9b3f-1d7a2c6e8f01',
  title: 'Album',
  barcode: '0724384559923',
  'release-group': { id: '5c0f4c9e-5a8b-4e3a-9b3f-1d7a2c6e8fa1', title: 'Album (Deluxe)' },
  'label-info': [{ label: { name: 'small indie label' } }, { 'catalog-number': 'SIL 001', label: { name: 'small indie label' } }],
});

describe('rightsFields', () => {
  it('When the recording performs a work with writers and ISWCs, then they are taken as MusicBrainz spells them, never upper-cased', () => {
    expect(recording?.works).toHaveLength(1);
    expect(rightsFields(release, recording!)).toEqual({
      catalognumber: 'SIL 001',
      barcode: '0724384559923',
      releasegroup: 'Album (Deluxe)',
      iswc: 'T-123.456.789-0',
      composer: 'Ana María Pérez, Bo',
      writers: ['Ana María Pérez', 'DJ von Köln', 'Bo'],
    });
  });

  it('When there is no work and no release, then nothing is made up', () => {
    const bare = decodeRecording({ id: '9b2d1e7c-3f4a-4b5c-8d6e-7f8091a2b3c4', title: 'Song' });
    expect(rightsFields(undefined, bare!)).toEqual({
      catalognumber: undefined,
      barcode: undefined,
      releasegroup: undefined,
      iswc: undefined,
      composer: undefined,
      writers: [],
    });
  });
});
