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
