import type { OutputType } from '../config/schema';
import type { OutputMessage, OutputMessageKind } from '../store/outputs';

// One small interface behind every output type (docs/outputs.md): which record events it is
// sent, and how one message is sent. The dispatcher owns queues, retries and isolation.

/** What one attempt came to. `retry` may carry the target's own wait (Retry-After, retry_after). */
export type Delivery =
  | { outcome: 'delivered'; status?: number; receipt?: string }
  | { outcome: 'failed'; status?: number; error: string }
  | { outcome: 'retry'; status?: number; error: string; retryAfterMs?: number };

export interface Output {
  readonly name: string;
  readonly type: OutputType;
  /** The message kind enqueued at each record event; absent: the output is not told of it. */
  readonly feeds: {
    /** A record became current (before enrichment ended). */
    changed?: OutputMessageKind;
    /** Its processing ended (enrichment done or out of time). */
    settled?: OutputMessageKind;
    /** A record was deleted. */
    deleted?: OutputMessageKind;
    /**
     * The current record was deleted: the message (keyed by the deleted dbid) carries the record
     * that is current again, or `{}` when none is left, so what shows the current track follows.
     */
    restored?: OutputMessageKind;
  };
  /** When behind, only the newest pending message is sent. */
  readonly latestOnly: boolean;
  /** Where it sends, without a secret, token or password. */
  readonly target: string;
  send(message: OutputMessage, signal: AbortSignal): Promise<Delivery>;
  close(): Promise<void>;
}

/** A record as outputs see it: the /v1/last object. */
export type TrackData = Readonly<Record<string, unknown>> & { dbid: number };

export function trackDataOf(message: Pick<OutputMessage, 'payload'>): TrackData {
  return JSON.parse(message.payload) as TrackData;
}

/** The origin of a URL and whether more follows, never its path or query (either may hold a token). */
export function redactedTarget(url: string, keepPath = false): string {
  const parsed = new URL(url);
  const rest = parsed.pathname === '/' && parsed.search === '' ? '' : keepPath ? parsed.pathname : '/…';
  return `${parsed.protocol}//${parsed.host}${rest}`;
}
