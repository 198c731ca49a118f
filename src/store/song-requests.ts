import { MAX_QUEUED_REQUESTS, MAX_REQUESTS_PER_WINDOW, MAX_WAITING_PER_REQUESTER, type NewSongRequest, type SongRequest } from '../domain/song-request';

// The song-request queue (docs/song-requests.md): the contract and the row rules both backends
// share; the bodies are sqlite/song-requests.ts and postgres/song-requests.ts.

export type AddOutcome =
  /** Queued. */
  | { state: 'added'; request: SongRequest }
  /** The same requester asked for the same track within the window: the earlier one stands. */
  | { state: 'deduped'; request: SongRequest }
  /** MAX_QUEUED_REQUESTS are waiting. */
  | { state: 'full' }
  /** MAX_WAITING_PER_REQUESTER of this requester are waiting. */
  | { state: 'requester-full' }
  /** MAX_REQUESTS_PER_WINDOW of the waiting requests were queued since the window's start. */
  | { state: 'window-full' };

/** The moments an add is checked against (ms): the requester's duplicates since `dedupeSince`, the intake since `windowSince`. */
export interface AddBounds {
  dedupeSince: number;
  windowSince: number;
}

/** The first bound a queue of `waiting` requests (`ofRequester` of them the requester's, `inWindow` queued within the window) leaves no room in. */
export function boundReached(waiting: number, ofRequester: number, inWindow: number): AddOutcome | undefined {
  if (waiting >= MAX_QUEUED_REQUESTS) return { state: 'full' };
  if (ofRequester >= MAX_WAITING_PER_REQUESTER) return { state: 'requester-full' };
  if (inWindow >= MAX_REQUESTS_PER_WINDOW) return { state: 'window-full' };
  return undefined;
}

export interface SongRequestStore {
  /** Queues `request` unless its requester queued the same normalised track since `bounds.dedupeSince`, or a bound is reached (boundReached). */
  add(request: NewSongRequest, bounds: AddBounds): Promise<AddOutcome>;
  /** The whole queue, oldest first. */
  list(): Promise<SongRequest[]>;
  /** Removes one request; null when there is no such id. */
  remove(id: number): Promise<SongRequest | null>;
  /** Removes the requests for a normalised artist and title (only `requester`'s when given). */
  removeByIdentity(normalizedArtist: string, normalizedTitle: string, requester?: string): Promise<SongRequest[]>;
  /** Empties the queue; answers what was removed. */
  clear(): Promise<SongRequest[]>;
}

export interface SongRequestRow {
  id: number | string;
  requester: string;
  artist: string | null;
  title: string | null;
  normalized_artist: string;
  normalized_title: string;
  origin: string;
  user_platform: string | null;
  external_id: string | null;
  user_input: string | null;
  requested_for: string | null;
  created_at: number | string;
}

export const REQUEST_COLUMNS =
  'id, requester, artist, title, normalized_artist, normalized_title, origin, user_platform, external_id, user_input, requested_for, created_at';

/** A row of either backend as a request (PostgreSQL answers bigint columns as strings). */
export function requestOf(row: SongRequestRow): SongRequest {
  return {
    id: Number(row.id),
    requester: row.requester,
    artist: row.artist,
    title: row.title,
    normalizedArtist: row.normalized_artist,
    normalizedTitle: row.normalized_title,
    origin: row.origin,
    userPlatform: row.user_platform,
    externalId: row.external_id,
    userInput: row.user_input,
    requestedFor: row.requested_for,
    createdAt: Number(row.created_at),
  };
}

/** The insert's values, in REQUEST_COLUMNS order without the id. */
export function insertValues(request: NewSongRequest): (string | number | null)[] {
  return [
    request.requester,
    request.artist,
    request.title,
    request.normalizedArtist,
    request.normalizedTitle,
    request.origin,
    request.userPlatform,
    request.externalId,
    request.userInput,
    request.requestedFor,
    request.createdAt,
  ];
}
