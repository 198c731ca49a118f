// The setlist page (GET /history): the tracks from GET /v1/history, newest first, a row each
// (time, cover, title, artist, album). A track change on /v1/images/ws reloads the newest page,
// so a new track (or a deleted current one) shows at once. The download links carry what the
// page shows, oldest first, in the formats of `svc history` (src/cli/setlist.ts: text lines
// `HH:MM  Artist - Title`, RFC 4180 CSV with its header row).
// Query options: ?since=2h (or 90m, 1d, an ISO date-time) and ?until=... limit the range.
'use strict';

(function () {
  const { connectStream, imageUrl } = window.svcStream;
  const PAGE = 100;
  const CSV_COLUMNS = [
    'received_at',
    'artist',
    'title',
    'album',
    'label',
    'date',
    'isrc',
    'duration',
    'started_at',
    'ended_at',
    'end_reason',
    'kind',
    'usage',
    'channel',
    'dj',
    'show',
    'atp',
    'listener_seconds',
    'peak',
  ];
  // Read from the play's `listeners` object (docs/play-log.md "Listeners per play").
  const LISTENER_COLUMNS = ['atp', 'listener_seconds', 'peak'];
  const SPAN = /^(\d{1,6})(s|m|h|d|w)$/;
  const UNIT_MS = { s: 1e3, m: 6e4, h: 36e5, d: 864e5, w: 6048e5 };

  const list = document.getElementById('tracks');
  const older = document.getElementById('older');
  const empty = document.getElementById('empty');
  const problem = document.getElementById('problem');
  const rangeText = document.getElementById('range');
  const csvLink = document.getElementById('download-csv');
  const textLink = document.getElementById('download-text');

  /** Newest first, as the API pages them. */
  let tracks = [];
  let nextLink = null;
  const range = readRange();
  // `?channel=`: only that channel's plays (docs/channels.md "Now playing per channel").
  const channel = new URLSearchParams(window.location.search).get('channel');

  function readRange() {
    const params = new URLSearchParams(window.location.search);
    const result = {};
    for (const key of ['since', 'until']) {
      const value = params.get(key);
      if (!value) continue;
      const span = SPAN.exec(value.trim());
      if (span) result[key] = new Date(Date.now() - Number(span[1]) * UNIT_MS[span[2]]).toISOString();
      else if (!Number.isNaN(Date.parse(value))) result[key] = new Date(value).toISOString();
    }
    return result;
  }

  function apiUrl(path) {
    return new URL(path, new URL('./', window.location.href)).href;
  }

  function firstPageLink() {
    const query = new URLSearchParams({ limit: String(PAGE), ...range });
    return `v1/history?${query.toString()}`;
  }

  async function fetchPage(link) {
    const response = await fetch(apiUrl(link), { headers: { Accept: 'application/json' } });
    if (!response.ok) throw new Error(`the server answered ${response.status}`);
    const body = await response.json();
    if (!body || !Array.isArray(body.tracks)) throw new Error('the server sent no track list');
    const tracks = channel ? body.tracks.filter((track) => track && track.channel === channel) : body.tracks;
    return { tracks, next: typeof body.next === 'string' ? body.next : null };
  }

  function text(value) {
    return typeof value === 'string' ? value : '';
  }

  const two = (n) => String(n).padStart(2, '0');

  /** The local date, `YYYY-MM-DD`, or '' for a time that does not parse. */
  function localDay(receivedAt) {
    const at = new Date(receivedAt);
    return Number.isNaN(at.getTime()) ? '' : `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())}`;
  }

  /** `HH:MM`, or `YYYY-MM-DD HH:MM` when the list spans days (as `svc history` prints it). */
  function clock(receivedAt, withDate) {
    const at = new Date(receivedAt);
    if (Number.isNaN(at.getTime())) return '--:--';
    const time = `${two(at.getHours())}:${two(at.getMinutes())}`;
    return withDate ? `${localDay(receivedAt)} ${time}` : time;
  }

  /** Whether the tracks shown were received on more than one local day. */
  function spansDays(list) {
    return list.length > 1 && localDay(list[0].received_at) !== localDay(list[list.length - 1].received_at);
  }

  /** Text from a submitter, made one line: control characters (a newline, a terminal escape) become spaces. */
  function oneLine(value) {
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    return text(value)
      .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
      .trim();
  }

  /** Whether `a` comes after `b` in the history (received time, then dbid). */
  function newer(a, b) {
    if (a.received_at !== b.received_at) return a.received_at > b.received_at;
    return a.dbid > b.dbid;
  }

  function row(track, withDate) {
    const item = document.createElement('li');
    item.className = 'track';
    item.dataset.dbid = String(track.dbid);
    const time = document.createElement('time');
    time.className = 'time';
    time.dateTime = text(track.received_at);
    time.textContent = clock(track.received_at, withDate);
    time.title = new Date(track.received_at).toLocaleString();
    const thumb = thumbnail(imageUrl(track.coverurl));
    const body = document.createElement('div');
    body.className = 'text';
    const lines = [
      ['title', text(track.title) || `untitled #${track.dbid}`],
      ['artist', text(track.artist)],
      ['album', [text(track.album), text(track.date).slice(0, 4)].filter(Boolean).join(' · ')],
      ['play', playLine(track)],
    ];
    for (const [name, value] of lines) {
      const line = document.createElement('div');
      line.className = `line ${name}`;
      line.textContent = value;
      body.append(line);
    }
    item.append(time, thumb, body);
    return item;
  }

  /** `1 listener`, `0 listeners`, `2.5 listeners`. */
  function count(n, noun) {
    return `${n} ${noun}${n === 1 ? '' : 's'}`;
  }

  /** Air times with seconds, kind, channel, people and listeners (docs/play-log.md). */
  function playLine(track) {
    if (typeof track.started_at !== 'string') return '';
    const seconds = (iso) => {
      const at = new Date(iso);
      return Number.isNaN(at.getTime()) ? '' : `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
    };
    const air = `${seconds(track.started_at)}–${typeof track.ended_at === 'string' ? seconds(track.ended_at) : 'on air'}`;
    const listeners =
      track.listeners && typeof track.listeners.atp === 'number' ? `${count(track.listeners.atp, 'listener')} (peak ${track.listeners.peak})` : '';
    const parts = [air, text(track.kind), text(track.channel), text(track.dj), text(track.show), listeners, recognised(track)];
    return parts.filter(Boolean).join(' · ');
  }

  /** `recognised 0.953`, `recognised 0.953 at +5.0 %`: a play recognition made (docs/recognition.md "A recognised play"). */
  function recognised(track) {
    if (typeof track.recognition !== 'string' || track.recognition === '') return '';
    const score = Number(track.recognition_score);
    const rate = Number(track.recognition_rate);
    const parts = ['recognised'];
    if (track.recognition_score !== undefined && Number.isFinite(score)) parts.push(score.toFixed(3));
    if (track.recognition_rate !== undefined && Number.isFinite(rate) && rate !== 1)
      parts.push(`at ${rate > 1 ? '+' : '-'}${(Math.abs(rate - 1) * 100).toFixed(1)} %`);
    return parts.join(' ');
  }

  /** The cover, or an empty tile of the same size while there is none. */
  function thumbnail(url) {
    if (!url) {
      const tile = document.createElement('div');
      tile.className = 'thumb';
      return tile;
    }
    const img = document.createElement('img');
    img.className = 'thumb';
    img.alt = '';
    img.loading = 'lazy';
    img.src = url;
    return img;
  }

  function render(fresh) {
    const withDate = spansDays(tracks);
    // A wider time column for `YYYY-MM-DD HH:MM` (history.css), so the date stays on one line.
    list.classList.toggle('with-dates', withDate);
    list.replaceChildren(...tracks.map((track) => row(track, withDate)));
    for (const dbid of fresh) {
      const item = list.querySelector(`[data-dbid="${dbid}"]`);
      if (!item) continue;
      item.classList.add('new');
      setTimeout(() => item.classList.remove('new'), 4000);
    }
    empty.hidden = tracks.length > 0;
    older.hidden = nextLink === null;
    document.body.dataset.count = String(tracks.length);
    updateDownloads();
  }

  let objectUrls = [];
  function updateDownloads() {
    for (const url of objectUrls) URL.revokeObjectURL(url);
    const oldestFirst = [...tracks].reverse();
    const withDate = spansDays(oldestFirst);
    const textBody = oldestFirst
      .map((t) => `${clock(t.received_at, withDate)}  ${[oneLine(t.artist), oneLine(t.title)].filter(Boolean).join(' - ') || `untitled #${t.dbid}`}\n`)
      .join('');
    const csvBody = [
      CSV_COLUMNS.join(','),
      ...oldestFirst.map((t) => CSV_COLUMNS.map((c) => csvField(LISTENER_COLUMNS.includes(c) ? (t.listeners || {})[c] : t[c])).join(',')),
    ]
      .map((l) => `${l}\r\n`)
      .join('');
    csvLink.href = URL.createObjectURL(new Blob([csvBody], { type: 'text/csv;charset=utf-8' }));
    textLink.href = URL.createObjectURL(new Blob([textBody], { type: 'text/plain;charset=utf-8' }));
    objectUrls = [csvLink.href, textLink.href];
  }

  function csvField(value) {
    let out;
    if (value === undefined || value === null) out = '';
    else if (Array.isArray(value)) out = value.filter((v) => v !== '').join('; ');
    else if (typeof value === 'object') out = JSON.stringify(value);
    else out = String(value);
    // As src/cli/setlist.ts csvField: no control characters but tab and line breaks, a leading '
    // before what a spreadsheet would run as a formula (OWASP "CSV Injection"), then RFC 4180.
    // eslint-disable-next-line no-control-regex -- removing control characters is the point
    out = out.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g, '');
    if (/^[=+\-@\t\r]/.test(out)) out = `'${out}`;
    return /[",\r\n]/.test(out) ? `"${out.replace(/"/g, '""')}"` : out;
  }

  function showProblem(error) {
    problem.hidden = false;
    problem.textContent = `Cannot load the history: ${error.message}`;
  }

  async function loadFirst() {
    const page = await fetchPage(firstPageLink());
    const known = new Set(tracks.map((t) => t.dbid));
    const fresh = tracks.length === 0 ? [] : page.tracks.filter((t) => !known.has(t.dbid)).map((t) => t.dbid);
    const boundary = page.tracks[page.tracks.length - 1];
    // The newest page replaces what it covers; older pages already loaded stay below it.
    const below = page.next && boundary ? tracks.filter((t) => newer(boundary, t)) : [];
    tracks = [...page.tracks, ...below];
    if (below.length === 0) nextLink = page.next;
    problem.hidden = true;
    render(fresh);
  }

  async function loadOlder() {
    if (!nextLink) return;
    older.disabled = true;
    try {
      const page = await fetchPage(nextLink);
      const known = new Set(tracks.map((t) => t.dbid));
      tracks = [...tracks, ...page.tracks.filter((t) => !known.has(t.dbid))];
      nextLink = page.next;
      render([]);
    } catch (error) {
      showProblem(error);
    } finally {
      older.disabled = false;
    }
  }

  function describeRange() {
    const format = (iso) => new Date(iso).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
    // The times are this browser's local times; the reports use reports.timeZone (docs/pages.md).
    const zone = `times in ${Intl.DateTimeFormat().resolvedOptions().timeZone} (this browser)`;
    if (range.since && range.until) return `${format(range.since)} – ${format(range.until)} · ${zone}`;
    if (range.since) return `since ${format(range.since)} · ${zone}`;
    if (range.until) return `before ${format(range.until)} · ${zone}`;
    return `newest first · ${zone}`;
  }

  // Track changes can come in bursts; one reload at a time, and one more if any came meanwhile.
  let loading = null;
  let again = false;
  function reload() {
    if (loading) {
      again = true;
      return;
    }
    loading = loadFirst()
      .catch(showProblem)
      .finally(() => {
        loading = null;
        if (again) {
          again = false;
          reload();
        }
      });
  }

  rangeText.textContent = describeRange();
  older.addEventListener('click', loadOlder);
  reload();
  connectStream({
    onTrack: reload,
    onImage(frame) {
      // A cover that arrived after the track: put it on that row.
      if (frame.category !== 'cover') return;
      const url = imageUrl(frame.url);
      const track = tracks.find((t) => t.dbid === frame.dbid);
      if (!url || !track) return;
      track.coverurl = frame.url;
      const thumb = list.querySelector(`[data-dbid="${frame.dbid}"] .thumb`);
      if (thumb) thumb.replaceWith(thumbnail(url));
    },
  });
})();
