import type { TrackRecord } from '../domain/track';
import type { HistoryPage, HistoryQuery, TrackStore } from '../store/tracks';
import { etagOf } from '../domain/etag';

// GET /v1/history bodies, serialized once per change of the store, like /v1/last's snapshot:
// setlist pages and pollers ask for the same page again and again, and a page of 100 costs about
// 100 times the JSON of one track. Bounded: past MAX_ENTRIES pages or MAX_BYTES the copies go.

export interface HistoryAnswer {
  body: string;
  etag: string;
}

const MAX_ENTRIES = 64;
const MAX_BYTES = 4 * 1024 * 1024;

export interface HistoryPages {
  answer(query: HistoryQuery): Promise<HistoryAnswer>;
}

export function createHistoryPages(tracks: TrackStore): HistoryPages {
  const copies = new Map<string, HistoryAnswer>();
  let copiedAt = tracks.version();
  let bytes = 0;
  return {
    async answer(query) {
      if (tracks.version() !== copiedAt) {
        copies.clear();
        bytes = 0;
        copiedAt = tracks.version();
      }
      const key = `${query.limit}|${query.before ?? ''}|${query.since ?? ''}|${query.until ?? ''}`;
      const copy = copies.get(key);
      if (copy) return copy;
      const readAt = tracks.version();
      const body = historyBody(await tracks.history(query), query);
      const answer = { body, etag: etagOf(body) };
      // A write while the page was read: the page is answered but not kept as current.
      if (tracks.version() !== readAt || readAt !== copiedAt) return answer;
      if (copies.size >= MAX_ENTRIES || bytes + body.length > MAX_BYTES) {
        copies.clear();
        bytes = 0;
      }
      copies.set(key, answer);
      bytes += body.length;
      return answer;
    },
  };
}

/** The /v1/history body: each entry is the /v1/last shape of its record plus `received_at`. */
function historyBody(page: HistoryPage, query: HistoryQuery): string {
  const tracks = page.records.map(historyEntry);
  const last = page.records.at(-1);
  if (!page.more || !last) return JSON.stringify({ tracks });
  // Relative to base_url, like coverurl; the filters travel along so the next page keeps them.
  const next = new URLSearchParams({ before: String(last.dbid), limit: String(query.limit) });
  if (query.since !== undefined) next.set('since', query.since);
  if (query.until !== undefined) next.set('until', query.until);
  return JSON.stringify({ tracks, next: `v1/history?${next.toString()}` });
}

function historyEntry(record: TrackRecord): Record<string, unknown> {
  // received_at last: a submitted field of that name never hides the real one.
  return { dbid: record.dbid, ...record.metadata, received_at: record.receivedAt };
}
