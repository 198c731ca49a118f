'use strict';
// What DJ software sends: a What's Now Playing "Remote Output" style submission with the named
// fields of api-spec 2.2. `[<id>]` is replaced by autocannon (idReplacement) with a unique id
// per request, so every stored row can be told apart.

const SUBMISSION = {
  artist: 'Bench Artist',
  title: 'Bench Title [<id>]',
  album: 'Bench Album',
  genre: 'Electronic',
  date: '2024',
  composer: 'A. Composer',
  publisher: 'Bench Records',
  bpm: 124,
  key: '8A',
  duration: 312,
  bitrate: 320,
  samplerate: 44100,
  isrc: 'GBAAA2400001',
};

/** The submission as a JSON body; `unique` keeps the `[<id>]` marker for autocannon. */
function submissionBody({ unique = true } = {}) {
  const track = { ...SUBMISSION, title: unique ? SUBMISSION.title : 'Bench Title' };
  return JSON.stringify(track);
}

module.exports = { SUBMISSION, submissionBody };
