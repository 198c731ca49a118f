// The "Reports" section of the history page (docs/reports.md "From the history page"): pick a month
// and a format, download. The file comes from GET /v1/reports/<format> through fetch() with the
// secret in the X-SVC-Client-Auth header (the server refuses a plain link: a navigation never
// downloads a report); a refusal lists the problems `svc report check` would print.
'use strict';

(function () {
  const month = document.getElementById('report-month');
  const format = document.getElementById('report-format');
  const channel = document.getElementById('report-channel');
  const secret = document.getElementById('report-secret');
  const allow = document.getElementById('report-allow');
  const button = document.getElementById('report-download');
  const status = document.getElementById('report-status');
  const problems = document.getElementById('report-problems');
  const two = (n) => String(n).padStart(2, '0');

  /** Last month: the one a station files. */
  function lastMonth() {
    const now = new Date();
    const at = new Date(now.getFullYear(), now.getMonth() - 1, 1);
    return `${at.getFullYear()}-${two(at.getMonth() + 1)}`;
  }

  /** The first and last local date of a `YYYY-MM` month. */
  function monthRange(value) {
    const [year, monthNumber] = value.split('-').map(Number);
    const last = new Date(year, monthNumber, 0).getDate();
    return { from: `${value}-01`, to: `${value}-${two(last)}` };
  }

  /** The file name the server gives (RFC 8187 `filename*` first). */
  function fileName(header) {
    const extended = /filename\*=UTF-8''([^;]+)/i.exec(header || '');
    if (extended) {
      try {
        return decodeURIComponent(extended[1]);
      } catch {
        // fall through to the plain name
      }
    }
    const plain = /filename="([^"]*)"/i.exec(header || '');
    return plain ? plain[1] : 'report.txt';
  }

  function showProblems(list) {
    problems.replaceChildren(
      ...list.map((line) => {
        const item = document.createElement('li');
        item.textContent = line;
        return item;
      }),
    );
    problems.hidden = list.length === 0;
  }

  function save(blob, name) {
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
  }

  async function download() {
    if (!month.value) {
      status.textContent = 'Pick a month first.';
      return;
    }
    const [name, variant] = format.value.split(':');
    const query = new URLSearchParams(monthRange(month.value));
    if (variant) query.set('variant', variant);
    if (channel.value.trim()) query.set('channel', channel.value.trim());
    if (allow.checked) query.set('allow_problems', '1');
    const headers = secret.value ? { 'X-SVC-Client-Auth': secret.value } : {};
    button.disabled = true;
    status.textContent = 'Checking and writing the report...';
    showProblems([]);
    try {
      const response = await fetch(new URL(`v1/reports/${name}?${query}`, new URL('./', window.location.href)), { headers });
      if (response.status === 422) {
        const body = await response.json();
        status.textContent = body.error || 'The report has problems.';
        showProblems(Array.isArray(body.problems) ? body.problems.map(String) : []);
        return;
      }
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        status.textContent = `The server refused (${response.status}): ${body.error || response.statusText}`;
        return;
      }
      const fileNameText = fileName(response.headers.get('Content-Disposition'));
      save(await response.blob(), fileNameText);
      const count = Number(response.headers.get('X-Report-Problems') || '0');
      status.textContent = `Downloaded ${fileNameText}${count > 0 ? ` with ${count} problem${count === 1 ? '' : 's'}` : ''}.`;
    } catch (error) {
      status.textContent = `No answer from the server: ${error.message}`;
    } finally {
      button.disabled = false;
    }
  }

  month.value = lastMonth();
  button.addEventListener('click', () => void download());
})();
