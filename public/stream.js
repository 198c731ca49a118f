// The /v1/images/ws client shared by the overlay and the slideshow: connects to the server that
// served the page, hands over `track` and `image` frames, and reconnects by itself (a restarted
// server is picked up again without touching OBS).
'use strict';

(function () {
  const MIN_DELAY_MS = 500;
  const MAX_DELAY_MS = 5000;
  const COVER_REFERENCE = /^cover\/[0-9a-f]{64}$/;

  /** `cover/<key>` -> an absolute URL on the page's server; anything else -> null. */
  function imageUrl(reference) {
    if (typeof reference !== 'string' || !COVER_REFERENCE.test(reference)) return null;
    return new URL(reference, new URL('./', window.location.href)).href;
  }

  function streamUrl() {
    const url = new URL('v1/images/ws', new URL('./', window.location.href));
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    // The page's `?channel=` is the stream's (docs/channels.md "Now playing per channel").
    const channel = new URLSearchParams(window.location.search).get('channel');
    if (channel) url.searchParams.set('channel', channel);
    return url.href;
  }

  /**
   * @param {{onTrack: (frame: object) => void, onImage: (frame: object) => void}} handlers
   */
  function connectStream(handlers) {
    let delay = MIN_DELAY_MS;
    const root = document.documentElement;

    function connect() {
      root.dataset.stream = 'connecting';
      let socket;
      try {
        socket = new WebSocket(streamUrl());
      } catch (error) {
        retry();
        return;
      }
      socket.addEventListener('open', () => {
        // Ask for the push stream at once (without it svc waits 0.5 s before pushing).
        socket.send(JSON.stringify({ type: 'subscribe' }));
        delay = MIN_DELAY_MS;
        root.dataset.stream = 'open';
      });
      socket.addEventListener('message', (event) => {
        let frame;
        try {
          frame = JSON.parse(event.data);
        } catch (error) {
          return;
        }
        if (frame && frame.type === 'track') handlers.onTrack(frame);
        else if (frame && frame.type === 'image') handlers.onImage(frame);
      });
      socket.addEventListener('close', retry);
    }

    let retrying = false;
    function retry() {
      if (retrying) return;
      retrying = true;
      root.dataset.stream = 'closed';
      // Jitter, so many browser sources do not reconnect in the same millisecond.
      const wait = delay * (0.75 + Math.random() * 0.5);
      delay = Math.min(MAX_DELAY_MS, delay * 2);
      setTimeout(() => {
        retrying = false;
        connect();
      }, wait);
    }

    connect();
  }

  window.svcStream = { connectStream, imageUrl };
})();
