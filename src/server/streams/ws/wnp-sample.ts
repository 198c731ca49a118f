// What's Now Playing's sample track, which its /wsstream sends to `?preview` (nothing playing) and
// `?sample` readers so its template editor always shows something. The fields and values are
// those of WNP's nowplaying/preview/sampledata.py (`_BASE_METADATA`), restated here; WNP adds its
// bundled sample images, svc sends the transparent PNG in each image field
// (docs/whats-now-playing.md "Preview").

export const WNP_SAMPLE_TRACK: Readonly<Record<string, unknown>> = Object.freeze({
  artist: 'Sample Artist',
  title: 'Sample Track Title',
  album: 'Sample Album',
  albumartist: 'Sample Artist',
  genre: 'Electronic',
  date: '2024',
  duration: 225,
  duration_hhmmss: '0:03:45',
  bpm: '128',
  key: 'Am',
  label: 'Sample Label',
  track: '1',
  track_total: '12',
  disc: '1',
  disc_total: '1',
  bitrate: '320000',
  cmdname: 'command',
  cmdtarget: ['SampleUser'],
  previoustrack: [
    { artist: 'Sample Artist', title: 'Sample Track Title' },
    { artist: 'Previous Artist', title: 'Previous Track Title' },
    { artist: 'Earlier Artist', title: 'Earlier Track Title' },
  ],
  comments: 'Sample comment for preview',
  composer: 'Sample Composer',
  isrc: ['USRC12345678'],
  musicbrainzartistid: ['00000000-0000-0000-0000-000000000000'],
  musicbrainzrecordingid: '00000000-0000-0000-0000-000000000001',
  artistshortbio:
    'Sample Artist is a fictional artist used for template preview. Their music spans multiple genres and has influenced countless DJs worldwide.',
  artistlongbio:
    'Sample Artist is a fictional artist used for template preview. Their music spans multiple genres and has influenced countless DJs worldwide. ' +
    'Founded in 2024, they have released numerous albums and toured extensively. This biography is provided as sample data so you can preview ' +
    'how your template renders biographical text without needing a live track.',
});
