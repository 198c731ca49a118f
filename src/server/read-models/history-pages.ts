import type { TrackRecord } from '../../domain/track';
import type { HistoryQuery, TrackStore } from '../../store/tracks';
import { etagOf } from '../../domain/etag';
import { BoundedMap } from '../../domain/bounded-map';
import { recordJson } from '../../domain/play';

// GET /v1/history bodies, serialized once per change of the store, like /v1/last's snapshot:
// setlist pages and pollers ask for the same page again and again, and a page of 100 costs about
// 100 times the JSON of one track. Bounded: past MAX_ENTRIES pages or MAX_BYTES the copies go.
// A `before=` page of old records can no longer change but by a deletion: it is kept across
// writes (SETTLED_BYTES, least recently used first), until any record is deleted
// (docs/limits-and-load.md "Expensive requests").

export interface HistoryAnswer {
  body: string;
  /** The body in UTF-8, encoded once per copy rather than once per reply. */
  bytes: Buffer;
  etag: string;
}

const MAX_ENTRIES = 64;
const MAX_BYTES = 4 * 1024 * 1024;
/**
 * A record this old is settled: enrichment, a late cover and the same-play rule (dedupeSeconds,
 * 600 by default) only ever change younger ones.
 */
const SETTLED_AFTER_MS = 15 * 60 * 1000;
const SETTLED_BYTES = 16 * 1024 * 1024;

export interface HistoryPages {
  /** The kept copy of this page, if it is still current (cheap: no pool needed). */
  cached(query: HistoryQuery): HistoryAnswer | undefined;
  answer(query: HistoryQuery): Promise<HistoryAnswer>;
}

/**
 * A page stops early, with a `next` link, once its body passes this many bytes
 * (docs/limits-and-load.md "Expensive requests"): 1,000 records at the record bound would be 64 MiB, and one page is work the event loop does between cheap answers.
 */
export const HISTORY_PAGE_MAX_BYTES = 1024 * 1024;

/** Records read per store call; the event loop serves cheap requests between calls. */
const READ_CHUNK = 50;

export function createHistoryPages(tracks: TrackStore, now: () => number = Date.now): HistoryPages {
  const copies = new Map<string, HistoryAnswer>();
  let copiedAt = tracks.version();
  let bytes = 0;
  const settled = new BoundedMap<string, HistoryAnswer>({ maxWeight: SETTLED_BYTES, weigh: (answer) => answer.bytes.length, order: 'use' });
  let settledAt = tracks.removals();
  const keyOf = (query: HistoryQuery) => `${query.limit}|${query.before ?? ''}|${query.since ?? ''}|${query.until ?? ''}`;
  const cached = (query: HistoryQuery) => {
    if (tracks.removals() !== settledAt) {
      settled.clear();
      settledAt = tracks.removals();
    }
    if (tracks.version() !== copiedAt) {
      copies.clear();
      bytes = 0;
      copiedAt = tracks.version();
    }
    const key = keyOf(query);
    return copies.get(key) ?? settled.get(key);
  };
  return {
    cached,
    async answer(query) {
      const copy = cached(query);
      if (copy) return copy;
      const readAt = tracks.version();
      const removalsAt = tracks.removals();
      const { body, changedAt } = await readHistoryPage(tracks, query);
      const answer = { body, bytes: Buffer.from(body), etag: etagOf(body) };
      const old = changedAt !== undefined && Date.parse(changedAt) < now() - SETTLED_AFTER_MS;
      if (query.before !== undefined && old && tracks.removals() === removalsAt && removalsAt === settledAt) {
        settled.set(keyOf(query), answer);
        return answer;
      }
      // A write while the page was read: the page is answered but not kept as current.
      if (tracks.version() !== readAt || readAt !== copiedAt) return answer;
      if (copies.size >= MAX_ENTRIES || bytes + body.length > MAX_BYTES) {
        copies.clear();
        bytes = 0;
      }
      copies.set(keyOf(query), answer);
      bytes += body.length;
      return answer;
    },
  };
}

/**
 * The /v1/history body, read in chunks that follow the same cursor a client would: each entry is
 * the /v1/last shape of its record plus `received_at`. Serialized entry by entry, so the page
 * can stop at HISTORY_PAGE_MAX_BYTES (always with at least one entry) and say where to go on.
 */
async function readHistoryPage(tracks: TrackStore, query: HistoryQuery): Promise<{ body: string; changedAt?: string }> {
  const entries: string[] = [];
  let size = 100; // the braces, "tracks" and the next link
  let before = query.before;
  let more = false;
  /** The last change on the page: its newest arrival or latest play end; a play on air may still change. */
  let changedAt: string | undefined;
  while (entries.length < query.limit) {
    if (entries.length > 0) await new Promise((resolve) => setImmediate(resolve));
    const page = await tracks.history({ ...query, before, limit: Math.min(READ_CHUNK, query.limit - entries.length) });
    for (const record of page.records) {
      changedAt = latestChange(changedAt, record);
      const entry = JSON.stringify(historyEntry(record));
      const entryBytes = Buffer.byteLength(entry) + 1;
      if (entries.length > 0 && size + entryBytes > HISTORY_PAGE_MAX_BYTES) return { body: pageBody(entries, before, query, true), changedAt };
      entries.push(entry);
      size += entryBytes;
      before = record.dbid;
    }
    more = page.more;
    if (!more) break;
  }
  return { body: pageBody(entries, before, query, more), changedAt };
}

/** Sorts after every time: a page with a play on air is never settled. */
const ON_AIR = '\uffff';

function latestChange(changedAt: string | undefined, record: TrackRecord): string {
  const own = record.play ? (record.play.endedAt ?? ON_AIR) : record.receivedAt;
  const latest = own > record.receivedAt ? own : record.receivedAt;
  return changedAt === undefined || latest > changedAt ? latest : changedAt;
}

function pageBody(entries: readonly string[], lastDbid: number | undefined, query: HistoryQuery, more: boolean): string {
  const tracks = `{"tracks":[${entries.join(',')}]`;
  if (!more || lastDbid === undefined) return `${tracks}}`;
  // Relative to base_url, like coverurl; the filters travel along so the next page keeps them.
  const next = new URLSearchParams({ before: String(lastDbid), limit: String(query.limit) });
  if (query.since !== undefined) next.set('since', query.since);
  if (query.until !== undefined) next.set('until', query.until);
  return `${tracks},"next":${JSON.stringify(`v1/history?${next.toString()}`)}}`;
}

/** One entry of GET /v1/history (and the answer to a correction of it). */
export function historyEntry(record: TrackRecord): Record<string, unknown> {
  // received_at last: a submitted field of that name never hides the real one.
  const entry = { ...recordJson(record), received_at: record.receivedAt };
  // Its audit trail last, when it has one (docs/http-api.md "`PATCH /v1/history/<dbid>`: correct a record").
  return record.corrections ? { ...entry, corrections: record.corrections } : entry;
}
