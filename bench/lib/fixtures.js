'use strict';
// What DJ software sends: a What's Now Playing "Remote Output" style submission with the named
// fields of docs/http-api.md The load worker replaces UNIQUE_MARKER (option `uniqueMarker`) with
// an id unique to each request, so every stored row can be told apart.

const UNIQUE_MARKER = '[<seq>]';

const SUBMISSION = {
  artist: 'Bench Artist',
  title: `Bench Title ${UNIQUE_MARKER}`,
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

/** The submission as a JSON body; `unique` keeps UNIQUE_MARKER in the title for the load worker. */
function submissionBody({ unique = true } = {}) {
  const track = { ...SUBMISSION, title: unique ? SUBMISSION.title : 'Bench Title' };
  return JSON.stringify(track);
}

/** The runLoad options of `amount` unique submissions to a svc at `svcUrl`. */
function submissionLoad(svcUrl, { connections, amount }) {
  return {
    url: `${svcUrl}/v1/remoteinput`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: submissionBody(),
    uniqueMarker: UNIQUE_MARKER,
    connections,
    amount,
  };
}

module.exports = { SUBMISSION, UNIQUE_MARKER, submissionBody, submissionLoad };
