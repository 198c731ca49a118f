import type { TrackRecord } from '../../domain/track';
import { recordJson } from '../../domain/play';

// The text of /v1/events (docs/chat-bots-and-obs.md "Server-Sent Events"), as the HTML
// standard's event-stream format reads it: fields `event`, `id`, `data`, `retry`, each line
// ended by LF, an empty line ending an event, a line starting with ":" a comment. Pure.

/** How long a browser waits before it reconnects (EventSource reads `retry:`). */
const RETRY_MS = 3000;
/** At most this many missed records are replayed on a reconnect. */
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

export function recordEvent(record: TrackRecord): string {
  return trackEvent(record.dbid, JSON.stringify(recordJson(record)));
}

/** A dbid as `Last-Event-ID` or `?since=` carries it; undefined for anything else. */
export function parseEventId(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,15}$/.test(text.trim())) return undefined;
  return Number(text.trim());
}
