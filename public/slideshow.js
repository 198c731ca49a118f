// Full-window slideshow of the current track's images (cover first, then artist images as the
// server finds them), crossfading every few seconds and starting over on each track change.
// Query options: ?interval=8 (seconds per image), ?categories=cover,fanart,thumbnail,
// ?caption=0 (hide title and artist).
'use strict';

(function () {
  const { connectStream, imageUrl } = window.svcStream;
  const params = new URLSearchParams(window.location.search);
  const intervalMs = Math.min(600, Math.max(2, Number(params.get('interval')) || 8)) * 1000;
  const categories = new Set((params.get('categories') || 'cover,fanart,thumbnail').split(',').map((c) => c.trim()));
  const showCaption = params.get('caption') !== '0';

  const slides = Array.from(document.querySelectorAll('.slide'));
  const caption = document.getElementById('caption');
  const titleText = document.getElementById('title');
  const artistText = document.getElementById('artist');

  let dbid = null;
  let images = [];
  let index = 0;
  let activeSlide = -1;
  let shown = null;
  let timer = null;

  function text(value) {
    return typeof value === 'string' ? value : '';
  }

  /** Adds an image of the current track; the cover goes first. True when it is new. */
  function add(reference, category) {
    const url = imageUrl(reference);
    if (!url || images.includes(url) || !categories.has(category)) return false;
    if (category === 'cover') images.unshift(url);
    else images.push(url);
    return true;
  }

  function show(url) {
    const forTrack = dbid;
    const loader = new Image();
    loader.src = url;
    loader.decode().then(
      () => {
        // A newer track or image may have taken over while this one loaded.
        if (forTrack !== dbid || !images.includes(url) || shown === url) return;
        const next = (activeSlide + 1) % slides.length;
        for (const img of slides[next].querySelectorAll('img')) img.src = url;
        slides[next].classList.add('active');
        if (activeSlide >= 0) slides[activeSlide].classList.remove('active');
        activeSlide = next;
        shown = url;
      },
      () => {
        // Unloadable (evicted?): drop it and move on.
        images = images.filter((candidate) => candidate !== url);
      },
    );
  }

  function clear() {
    for (const slide of slides) slide.classList.remove('active');
    activeSlide = -1;
    shown = null;
  }

  function restartTimer() {
    if (timer !== null) clearInterval(timer);
    timer = setInterval(() => {
      if (images.length < 2) return;
      index = (index + 1) % images.length;
      show(images[index]);
    }, intervalMs);
  }

  function onTrack(frame) {
    const track = frame.track || {};
    titleText.textContent = text(frame.title !== undefined ? frame.title : track.title);
    artistText.textContent = text(frame.artist !== undefined ? frame.artist : track.artist);
    caption.hidden = !showCaption || (titleText.textContent === '' && artistText.textContent === '');
    document.body.dataset.dbid = String(frame.dbid);
    if (frame.dbid !== dbid) {
      dbid = frame.dbid;
      images = [];
      index = 0;
      clear();
      restartTimer();
    }
    if (add(track.coverurl, 'cover')) {
      index = 0;
      show(images[0]);
    }
  }

  function onImage(frame) {
    if (frame.dbid !== dbid || !add(frame.url, frame.category)) return;
    // The first image of a track (or a cover that came late) goes on screen at once.
    if (shown === null || frame.category === 'cover') {
      index = images.indexOf(imageUrl(frame.url));
      show(images[index]);
      restartTimer();
    }
  }

  connectStream({ onTrack, onImage });
})();
