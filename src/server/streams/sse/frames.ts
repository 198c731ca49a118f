import type { TrackRecord } from '../../../domain/track';
import { recordJson } from '../../../domain/play';

// The text of /v1/events (docs/chat-bots-and-obs.md "Server-Sent Events"), as the HTML
// standard's event-stream format reads it: fields `event`, `id`, `data`, `retry`, each line
// ended by LF, an empty line ending an event, a line starting with ":" a comment. Pure.

/** How long a browser waits before it reconnects (EventSource reads `retry:`). */
const RETRY_MS = 3000;
/** Missed records are replayed in pieces of this many (event-stream.ts MAX_REPLAY_PIECES pieces per connection). */
export const MAX_REPLAY = 100;

export const OPENING = `retry: ${RETRY_MS}\n\n`;

/**
 * How long a reader whose replay the busy server cannot serve now waits before it asks again
 * (what the 503's `Retry-After: 1` said), plus up to BUSY_RETRY_SPREAD_MS more: readers refused
 * together do not all come back in the same instant.
 */
export const BUSY_RETRY_MS = 1000;
export const BUSY_RETRY_SPREAD_MS = 1000;

/**
 * The whole answer to a reader whose replay cannot be served now (docs/chat-bots-and-obs.md
 * "Server-Sent Events"). An error status would end a browser's EventSource for good (the HTML
 * standard fails the connection on any status but 200, test/integration/screens/events-busy-browser.test.ts);
 * a 200 stream that ends is reconnected after `retry`. The `busy` event's `id:` is the reader's
 * own last id, so the reconnect's Last-Event-ID asks for the same replay; its data carries the
 * current track (`current`, the /v1/last JSON or null) for a page that has nothing to show yet.
 * Not a `track` event: every dbid still comes once, in order, when the replay is served.
 */
export function busyAnswer(after: number, retryMs: number, current: string | undefined): string {
  return `retry: ${retryMs}\n\nevent: busy\nid: ${after}\ndata: {"after":${after},"retry_ms":${retryMs},"current":${current ?? 'null'}}\n\n`;
}

/** The retry of a busy answer: BUSY_RETRY_MS plus a spread taken from `random` (0 <= r < 1). */
export function busyRetryMs(random: number): number {
  return BUSY_RETRY_MS + Math.floor(Math.min(Math.max(random, 0), 0.999) * BUSY_RETRY_SPREAD_MS);
}
export const HEARTBEAT = ': keep-alive\n\n';

/**
 * One `track` event. `body` is the /v1/last JSON, one line (JSON.stringify escapes every CR and
 * LF inside strings, so no value can end the `data:` line early).
 */
export function trackEvent(dbid: number, body: string): string {
  return `event: track\nid: ${dbid}\ndata: ${body}\n\n`;
}

/**
 * An event of another kind (`request.added`, `request.removed`): no `id:` line, so a reader's
 * Last-Event-ID stays the last track's dbid and a reconnect replays tracks only.
 */
export function namedEvent(event: string, data: object): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Past the replay budget (docs/chat-bots-and-obs.md "Server-Sent Events"): the records after
 * `after` and before `resumesAt` are not replayed. No `id`, so a reconnect still resumes from the
 * last record received.
 */
export function gapEvent(after: number, resumesAt: number): string {
  return `event: gap\ndata: ${JSON.stringify({ after, resumes_at: resumesAt })}\n\n`;
}

/** A stored record as /v1/last shows it: `{dbid, ...metadata}` on one line. */
export function recordBody(record: TrackRecord): string {
  return JSON.stringify(recordJson(record));
}

export function recordEvent(record: TrackRecord): string {
  return trackEvent(record.dbid, recordBody(record));
}

/** A dbid as `Last-Event-ID` or `?since=` carries it; undefined for anything else. */
export function parseEventId(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,15}$/.test(text.trim())) return undefined;
  return Number(text.trim());
}
