// Now-playing overlay: title, artist, album and cover of the current track, live from
// /v1/images/ws. A cover that arrives after the track (an `image` frame) is shown when it does.
'use strict';

(function () {
  const { connectStream, imageUrl } = window.svcStream;
  const card = document.getElementById('card');
  const cover = document.getElementById('cover');
  const art = cover.parentElement;
  const fields = ['title', 'artist', 'album'].map((name) => [name, document.getElementById(name)]);
  const hint = document.getElementById('hint');
  let currentDbid = null;
  // OBS's browser source defines window.obsstudio: there the page stays transparent. Anywhere
  // else, while nothing plays, a short note says what this page is and where the others are
  // (after a moment: the current track, when there is one, arrives first).
  if (!window.obsstudio) {
    setTimeout(() => {
      if (currentDbid === null) hint.hidden = false;
    }, 800);
  }
  // The current track's cover: from the track frame, or from an image frame that came later.
  let coverReference = null;

  function text(value) {
    return typeof value === 'string' ? value : '';
  }

  let wantedCover = null;
  function showCover(reference) {
    const url = imageUrl(reference);
    wantedCover = url;
    if (!url) {
      cover.hidden = true;
      cover.removeAttribute('src');
      art.classList.add('empty');
      return;
    }
    if (cover.src === url) return;
    // Loaded off-screen first, so the old cover stays until the new one can be drawn.
    const next = new Image();
    next.onload = () => {
      if (wantedCover !== url) return;
      cover.src = url;
      cover.hidden = false;
      art.classList.remove('empty');
    };
    next.src = url;
  }

  function render(frame) {
    const track = frame.track || {};
    for (const [name, element] of fields) element.textContent = text(frame[name] !== undefined ? frame[name] : track[name]);
    document.body.dataset.dbid = String(frame.dbid);
    showCover(coverReference);
    card.hidden = false;
  }

  function onTrack(frame) {
    hint.hidden = true;
    const isChange = currentDbid !== null && currentDbid !== frame.dbid;
    const submitted = frame.track && frame.track.coverurl;
    coverReference = submitted || (isChange ? null : coverReference);
    currentDbid = frame.dbid;
    if (!isChange) {
      render(frame);
      return;
    }
    // Fade out, swap the text, fade in.
    card.classList.add('changing');
    setTimeout(() => {
      if (currentDbid !== frame.dbid) return;
      render(frame);
      card.classList.remove('changing');
    }, 400);
  }

  function onImage(frame) {
    if (frame.dbid !== currentDbid || frame.category !== 'cover') return;
    coverReference = frame.url;
    showCover(coverReference);
  }

  connectStream({ onTrack, onImage });
})();
