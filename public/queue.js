// The song-request panel of the setlist page (docs/song-requests.md): the queue from
// GET /v1/requests, oldest first, refreshed on every `request.added` and `request.removed` event
// of GET /v1/events. When svc has a secret, the page's address carries it after a `#`
// (`/history#secret=...`): the fragment never leaves the browser, and the page sends it in the
// X-SVC-Client-Auth header.
'use strict';

(function () {
  const panel = document.getElementById('queue');
  const list = document.getElementById('queue-list');
  const count = document.getElementById('queue-count');
  const note = document.getElementById('queue-note');

  function apiUrl(path) {
    return new URL(path, new URL('./', window.location.href)).href;
  }

  function secretHeader() {
    const secret = new URLSearchParams(window.location.hash.slice(1)).get('secret');
    return secret ? { 'X-SVC-Client-Auth': secret } : {};
  }

  function oneLine(value) {
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    return typeof value === 'string' ? value.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim() : '';
  }

  function entry(request) {
    const item = document.createElement('li');
    item.dataset.requestId = String(request.request_id);
    const names = [oneLine(request.artist), oneLine(request.title)].filter(Boolean).join(' – ');
    const who = document.createElement('span');
    who.className = 'who';
    who.textContent = ` for ${oneLine(request.requester)}`;
    item.append(document.createTextNode(names || '(nothing named)'), who);
    return item;
  }

  function show(message) {
    note.textContent = message;
    note.hidden = message === '';
  }

  async function load() {
    let response;
    try {
      response = await fetch(apiUrl('v1/requests'), { headers: { Accept: 'application/json', ...secretHeader() } });
    } catch (error) {
      show('The request queue could not be read.');
      return;
    }
    panel.hidden = false;
    if (response.status === 403) {
      list.replaceChildren();
      count.textContent = '';
      show('The request queue needs svc’s secret: open this page as /history#secret=… .');
      return;
    }
    const body = response.ok ? await response.json() : null;
    const requests = body && Array.isArray(body.requests) ? body.requests : [];
    list.replaceChildren(...requests.map(entry));
    count.textContent = `(${requests.length})`;
    show(requests.length === 0 ? 'No requests waiting.' : '');
  }

  // One load at a time, and one more if events came meanwhile.
  let loading = null;
  let again = false;
  function reload() {
    if (loading) {
      again = true;
      return;
    }
    loading = load().finally(() => {
      loading = null;
      if (again) {
        again = false;
        reload();
      }
    });
  }

  reload();
  // EventSource reconnects by itself; a reload after each reconnect catches what was missed.
  const events = new EventSource(apiUrl('v1/events'));
  events.addEventListener('request.added', reload);
  events.addEventListener('request.removed', reload);
  events.addEventListener('open', reload);
})();
