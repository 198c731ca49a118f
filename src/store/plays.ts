import type { EndReason, NewPlay, PlayInfo, PlayKind, PlayListeners, PlayUsage } from '../domain/play';
import type { TrackFields } from '../domain/track';

// The play log's store (docs/play-log.md): plays are rows of `tracks` with air-time columns, and
// listener sessions have a table of their own. This file holds the contract both backends keep,
// and the row shapes and rules they share; the bodies are sqlite/plays.ts and postgres/plays.ts.

/** One play as the log keeps it: the record's metadata and its play-log fields. */
export interface PlayRow {
  dbid: number;
  receivedAt: string;
  metadata: TrackFields;
  play: PlayInfo;
}

/** A time range on started_at (plays) or an overlap range (sessions): `from` inclusive, `to` exclusive, ISO 8601 UTC. */
export interface PlayRange {
  from: string;
  to: string;
  /** Only this channel; all channels when absent. */
  channel?: string;
}

export type SessionSource = 'auth' | 'poll';

/** Which Icecast client a session is: unique among the open sessions. */
export interface SessionKey {
  /** The Icecast server as configured (its URL's origin), or `host:port` as its auth call names it. */
  server: string;
  mount: string;
  /** Icecast's client id. */
  clientId: string;
}

export interface NewSession extends SessionKey {
  channel: string;
  source: SessionSource;
  /** A keyed hash of the address, or the address itself with playlog.keepAddresses. */
  address: string;
  userAgent: string;
  connectedAt: string;
}

export interface ListenerSession extends NewSession {
  id: number;
  /** Null while the listener is connected. */
  disconnectedAt: string | null;
}

/** How a play's listeners are counted: playlog.minSessionSeconds, and the moment an open session is measured to. */
export interface CountOptions {
  minSessionSeconds: number;
  now: string;
}

/** What openSession did: a new session, one already open under the key, or refused at the mount's cap. */
export type OpenResult = 'opened' | 'already-open' | 'full';

/** A mount's current (or last) live stretch as svc saw it: from `liveSince`, until `endedAt` (null: still live). */
export interface MountLive {
  liveSince: string;
  endedAt: string | null;
}

/** A play that has ended and whose listeners are still to be counted. */
export interface EndedPlay {
  dbid: number;
  channel: string;
  startedAt: string;
  endedAt: string;
}

/** The most rows a page of a streamed range holds (PostgreSQL reads this many per round trip): memory stays flat whatever the range. */
export const PLAY_PAGE = 500;

export interface PlayLogStore {
  /**
   * Plays whose started_at is in the range, oldest first (started_at, dbid), a page of at most
   * PLAY_PAGE at a time: a month's report takes one await per page, not per play.
   */
  playPages(range: PlayRange): AsyncIterable<readonly PlayRow[]>;
  /**
   * Listener sessions overlapping the range (connected before `to`, and still connected or
   * disconnected after `from`), by connected_at then id, page by page.
   */
  sessionPages(range: PlayRange): AsyncIterable<readonly ListenerSession[]>;
  /** Ends the channel's play on air at `at` (not before its start); answers its dbid, or null when none is on air. */
  end(channel: string, at: string, reason: EndReason): Promise<number | null>;
  /** Ends every play whose submitted duration ran out by `now` with nothing after it; answers their dbids. */
  endDue(now: string): Promise<number[]>;
  /** The earliest planned end among the plays on air, or null: when endDue has work next. */
  nextPlannedEnd(): Promise<string | null>;
  /** Ended plays whose listeners were not counted yet, oldest first. */
  uncounted(limit: number): Promise<EndedPlay[]>;
  /**
   * Marks the ended plays of a channel that ended after `since` to be counted again (a listener
   * learnt of late was connected since then); answers how many.
   */
  recountFrom(channel: string, since: string): Promise<number>;
  /**
   * Keeps a play's listeners (null: no listener source) and marks it counted, unless it is counted
   * already (another instance on the same database was first): the first count made stands.
   */
  setListeners(dbid: number, listeners: PlayListeners | null): Promise<void>;
  /** Replaces a play's kept listeners and marks it counted, whatever was kept before (a recount: playlog/recount.ts). */
  replaceListeners(dbid: number, listeners: PlayListeners): Promise<void>;
  /**
   * The listeners of a channel's play [startedAt, endedAt), by countListeners' rule (domain/play.ts),
   * in one SQL query: the sessions open since before the play (or since `minSessionSeconds` before
   * `now`) come from the open totals the database keeps (SQLite migration 18, PostgreSQL 15), the
   * rest from the sessions that opened or closed since it started (countCut). The work grows with
   * what changed during and since the play, never with the open sessions or the table.
   */
  countListeners(channel: string, startedAt: string, endedAt: string, options: CountOptions): Promise<PlayListeners>;
  /** Records a listener who joined, unless one is open under the key already, or `maxOpen` are open on its mount. */
  openSession(session: NewSession, maxOpen: number): Promise<OpenResult>;
  /** Records that a listener left; false when no such session is open. */
  closeSession(key: SessionKey, at: string): Promise<boolean>;
  /** Whether a session under the key ended at or after `since`: a listener_remove for it again is a replay. */
  endedSince(key: SessionKey, since: string): Promise<boolean>;
  /**
   * Closes every open session connected more than `maxMs` before `now`, at its connected_at +
   * `maxMs` (the bounded lifetime, docs/play-log.md "Sessions that must be plausible"); answers how many.
   */
  closeOverdue(now: string, maxMs: number): Promise<number>;
  /**
   * Icecast numbers its clients from 0 again when it restarts, and asks listener_add in client
   * order per mount: sessions still open on the mount with a higher client id than `clientId`
   * belong to an earlier run whose removes never came. They are closed at `at`; answers how many.
   */
  closeEarlierRun(server: string, mount: string, clientId: string, at: string): Promise<number>;
  /** The open sessions of one server's mount (polling compares them with Icecast's list). */
  openSessions(server: string, mount: string): Promise<ListenerSession[]>;
  /** What svc knows of when a mount was live (listener-sessions.ts); undefined before any sign of it. */
  mountLive(server: string, mount: string): Promise<MountLive | undefined>;
  /**
   * The mount was live from `since` (a listener connected then, a source started): a live stretch
   * reaches back to it; after an end, a new stretch starts no earlier than that end.
   */
  markLive(server: string, mount: string, since: string): Promise<void>;
  /** The mount's source went away at `at`: its live stretch ends. */
  markEnded(server: string, mount: string, at: string): Promise<void>;
  /** Bumped by every change of a play's end or listeners here: part of TrackStore.version(). */
  version(): number;
}

/** The play-log columns of `tracks`, in the order playFromRow reads them. */
export const PLAY_COLUMNS = 'started_at, ended_at, end_reason, channel, kind, usage, dj, show, trimmed_seconds, listeners';

export interface PlayColumns {
  started_at: string | null;
  ended_at: string | null;
  end_reason: string | null;
  channel: string;
  kind: string;
  usage: string;
  dj: string | null;
  show: string | null;
  trimmed_seconds: number | null;
  /** SQLite: JSON text; PostgreSQL: parsed by the driver. */
  listeners: string | PlayListeners | null;
}

export function playFromRow(row: PlayColumns, receivedAt: string): PlayInfo {
  const play: PlayInfo = {
    startedAt: row.started_at ?? receivedAt,
    endedAt: row.ended_at,
    endReason: row.end_reason as EndReason | null,
    channel: row.channel,
    kind: row.kind as PlayKind,
    usage: row.usage as PlayUsage,
    listeners: typeof row.listeners === 'string' ? (JSON.parse(row.listeners) as PlayListeners) : row.listeners,
  };
  if (row.dj !== null) play.dj = row.dj;
  if (row.show !== null) play.show = row.show;
  if (row.trimmed_seconds !== null) play.trimmedSeconds = row.trimmed_seconds;
  return play;
}

/** The play a record without one gets: it aired from its arrival, on the main channel, as music. */
export function defaultPlay(receivedAt: string): NewPlay {
  return { startedAt: receivedAt, channel: 'main', kind: 'music', usage: 'feature' };
}

/** The channel's latest play, which a new one follows. */
export interface LatestPlay {
  dbid: number;
  started_at: string;
  ended_at: string | null;
  planned_end_at: string | null;
}

/** How a new play changes the one before it on its channel (both backends). */
export interface PlacedPlay {
  /** The new play's start: never before the latest play's start, so plays stay in order. */
  startedAt: string;
  /** The latest play's new end, when it changes. */
  previousEnd?: { dbid: number; endedAt: string; reason: EndReason; trimmedSeconds: number | null };
}

/**
 * Places a new play after the channel's latest (docs/play-log.md "Air times"): a play on air ends
 * where the new one starts (or where its submitted duration ran out, if that came first); a play
 * that already ended after the new start is trimmed to it, and the cut is recorded.
 */
export function placePlay(latest: LatestPlay | undefined, requestedStart: string): PlacedPlay {
  if (!latest) return { startedAt: requestedStart };
  const startedAt = requestedStart < latest.started_at ? latest.started_at : requestedStart;
  if (latest.ended_at === null) {
    if (latest.planned_end_at !== null && latest.planned_end_at <= startedAt) {
      return { startedAt, previousEnd: { dbid: latest.dbid, endedAt: latest.planned_end_at, reason: 'duration', trimmedSeconds: null } };
    }
    return { startedAt, previousEnd: { dbid: latest.dbid, endedAt: startedAt, reason: 'next', trimmedSeconds: null } };
  }
  if (latest.ended_at <= startedAt) return { startedAt };
  const cut = (Date.parse(latest.ended_at) - Date.parse(startedAt)) / 1000;
  return { startedAt, previousEnd: { dbid: latest.dbid, endedAt: startedAt, reason: 'next', trimmedSeconds: cut } };
}

/** A new play's columns as both backends insert them: started_at, channel, kind, usage, dj, show, planned_end_at. */
export function playRowValues(play: NewPlay, startedAt: string): [string, string, string, string, string | null, string | null, string | null] {
  return [startedAt, play.channel, play.kind, play.usage, play.dj ?? null, play.show ?? null, plannedEndFor(play, startedAt)];
}

/** The planned end moves with the start: a play placed later than it asked runs its whole duration from there. */
export function plannedEndFor(play: NewPlay, startedAt: string): string | null {
  if (play.plannedEndAt === undefined) return null;
  const durationMs = Date.parse(play.plannedEndAt) - Date.parse(play.startedAt);
  return new Date(Date.parse(startedAt) + Math.max(0, durationMs)).toISOString();
}

/**
 * Where a play's count splits its open sessions (PlayLogStore.countListeners): those connected
 * before `cut` span the whole play and pass the minimum length, so the open totals count them;
 * `span` is the play's length in ms, what each of them adds to its listener time.
 */
export function countCut(startedAt: string, endedAt: string, options: CountOptions): { cut: string; span: number } {
  const cutMs = Math.max(0, Math.min(Date.parse(startedAt), Date.parse(options.now) - options.minSessionSeconds * 1000));
  return { cut: new Date(cutMs).toISOString(), span: Math.max(0, Date.parse(endedAt) - Date.parse(startedAt)) };
}

/** An end never before the play's start (a clock that went back, an end sent at once). */
export function endNotBefore(startedAt: string, at: string): string {
  return at < startedAt ? startedAt : at;
}

export interface SessionRow {
  id: number;
  channel: string;
  source: SessionSource;
  server: string;
  mount: string;
  client_id: string;
  address: string;
  user_agent: string;
  connected_at: string;
  disconnected_at: string | null;
}

export const SESSION_COLUMNS = 'id, channel, source, server, mount, client_id, address, user_agent, connected_at, disconnected_at';

export function sessionFromRow(row: SessionRow): ListenerSession {
  return {
    id: Number(row.id),
    channel: row.channel,
    source: row.source,
    server: row.server,
    mount: row.mount,
    clientId: row.client_id,
    address: row.address,
    userAgent: row.user_agent,
    connectedAt: row.connected_at,
    disconnectedAt: row.disconnected_at,
  };
}
