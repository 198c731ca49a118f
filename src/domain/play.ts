// The play log's shapes and pure rules (docs/play-log.md): air times, kinds, channels and the
// listener counts of a play. No I/O: the store keeps them, the pipeline and the server fill them.

export const PLAY_KINDS = ['music', 'jingle', 'id', 'ad', 'talk', 'bed', 'unknown'] as const;
export type PlayKind = (typeof PLAY_KINDS)[number];

export const PLAY_USAGES = ['feature', 'theme', 'background'] as const;
export type PlayUsage = (typeof PLAY_USAGES)[number];

export const END_REASONS = ['next', 'explicit', 'source_disconnect', 'duration'] as const;
export type EndReason = (typeof END_REASONS)[number];

export const DEFAULT_CHANNEL = 'main';

/** Who heard a play (docs/play-log.md "Listeners per play"); computed once when it ends. */
export interface PlayListeners {
  /** Distinct listener sessions whose interval overlaps the play (aggregate tuning performances). */
  atp: number;
  /** Sum over those sessions of the seconds they overlap the play. */
  listener_seconds: number;
  /** Most sessions connected at one moment during the play. */
  peak: number;
}

/** The play-log part of a stored record. Times are ISO 8601 UTC with milliseconds. */
export interface PlayInfo {
  startedAt: string;
  /** Null while the play is on air. */
  endedAt: string | null;
  endReason: EndReason | null;
  channel: string;
  kind: PlayKind;
  usage: PlayUsage;
  dj?: string;
  show?: string;
  /** Seconds cut from this play's recorded end by a later play that said it started earlier. */
  trimmedSeconds?: number;
  /** Null until the play ends, or when no listener source is configured. */
  listeners: PlayListeners | null;
}

/** What a submission asks of its play, before the store fixes its start against the channel's other plays. */
export interface NewPlay {
  startedAt: string;
  channel: string;
  kind: PlayKind;
  usage: PlayUsage;
  dj?: string;
  show?: string;
  /** When a submitted `duration` runs out (end reason `duration` if nothing follows). */
  plannedEndAt?: string;
}

/** The fields a play adds to every record surface (/v1/last, /v1/history, the streams, outputs). */
export interface PlayJson {
  started_at: string;
  ended_at: string | null;
  end_reason: EndReason | null;
  kind: PlayKind;
  usage: PlayUsage;
  channel: string;
  dj?: string;
  show?: string;
  trimmed_seconds?: number;
  listeners: PlayListeners | null;
}

export function playJson(play: PlayInfo): PlayJson {
  return {
    started_at: play.startedAt,
    ended_at: play.endedAt,
    end_reason: play.endReason,
    kind: play.kind,
    usage: play.usage,
    channel: play.channel,
    ...(play.dj === undefined ? {} : { dj: play.dj }),
    ...(play.show === undefined ? {} : { show: play.show }),
    ...(play.trimmedSeconds === undefined ? {} : { trimmed_seconds: play.trimmedSeconds }),
    listeners: play.listeners,
  };
}

/** One interval of a listener, as Icecast reported it (docs/play-log.md "Listener sessions"). */
export interface SessionInterval {
  connectedAt: string;
  /** Null while still connected. */
  disconnectedAt: string | null;
  /**
   * Who listened: the hashed address and the user agent. Sessions of one listener are one
   * performance of a play (a reconnect inside it counts once); absent, each session is its own.
   */
  listener?: string;
}

/** The listener a session belongs to, as `countListeners` and the store's count compare them. */
export function listenerOf(address: string, userAgent: string): string {
  return `${address}\n${userAgent}`;
}

/**
 * The listeners of one play from the sessions that overlap it: `connected_at < ended_at` and
 * (`disconnected_at` null or after `started_at`). A session still open counts up to the play's end.
 * Sessions shorter than `minSessionSeconds` (an open one measured up to `nowMs`) are left out.
 * `atp` counts distinct listeners (SessionInterval.listener); seconds and peak count sessions.
 * The stores count a play's listeners with one SQL query by the same rule (PlayLogStore.countListeners).
 */
export function countListeners(
  play: { startedAt: string; endedAt: string },
  sessions: Iterable<SessionInterval>,
  minSessionSeconds: number,
  nowMs: number,
): PlayListeners {
  const start = Date.parse(play.startedAt);
  const end = Date.parse(play.endedAt);
  const edges: [number, number][] = [];
  const listeners = new Set<string>();
  let anonymous = 0;
  let listenerMs = 0;
  for (const session of sessions) {
    const connected = Date.parse(session.connectedAt);
    const disconnected = session.disconnectedAt === null ? null : Date.parse(session.disconnectedAt);
    if (!(connected < end) || (disconnected !== null && !(disconnected > start))) continue;
    if (minSessionSeconds > 0 && ((disconnected ?? nowMs) - connected) / 1000 < minSessionSeconds) continue;
    const from = Math.max(connected, start);
    const to = Math.min(disconnected ?? end, end);
    if (session.listener === undefined) anonymous += 1;
    else listeners.add(session.listener);
    listenerMs += Math.max(0, to - from);
    edges.push([from, 1], [to, -1]);
  }
  // A leave at the same moment as a join is counted first: a listener who reconnects is one, not two.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let connectedNow = 0;
  let peak = 0;
  for (const [, step] of edges) {
    connectedNow += step;
    peak = Math.max(peak, connectedNow);
  }
  return { atp: listeners.size + anonymous, listener_seconds: Math.round(listenerMs / 1000), peak };
}

/**
 * A record as every surface shows it (/v1/last, /v1/history, the streams, outputs): its dbid,
 * its metadata, and its play's fields after them, so a submitted field of the same name never
 * hides the log's own.
 */
export function recordJson(record: { dbid: number; metadata: Readonly<Record<string, unknown>>; play?: PlayInfo }): { dbid: number } & Record<string, unknown> {
  return record.play ? { dbid: record.dbid, ...record.metadata, ...playJson(record.play) } : { dbid: record.dbid, ...record.metadata };
}

/** SoundExchange's transmission categories, as a statement of account names them (docs/reports-us.md "SoundExchange"). */
export const TRANSMISSION_CATEGORIES = ['A', 'B', 'C', 'H', 'I', 'J', 'K'] as const;

/** A play on air longer than this is a problem for every report that lists plays (docs/reports.md "Checks"): left open, or a lost end. */
export const LONG_PLAY_SECONDS = 7200;
