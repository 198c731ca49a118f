import { EventEmitter } from 'node:events';
import { fieldText, type TrackRecord } from '../domain/track';
import {
  MAX_REQUEST_FIELD,
  REQUEST_DEDUPE_MS,
  REQUEST_WINDOW_MS,
  fulfilmentSteps,
  normaliseName,
  readRequestText,
  requestTrackId,
  type NewSongRequest,
  type SongRequest,
} from '../domain/song-request';
import { AppError, errorMessage } from '../errors';
import type { Logger } from '../log';
import type { SongRequestStore } from '../store/song-requests';

// The song-request use case (docs/song-requests.md): What's Now Playing's queue API on svc's
// store. A request is queued, listed, removed, or fulfilled when a matching track plays; each
// addition and removal is an event (GET /v1/events carries them).

/** A request as GET /v1/requests lists it (What's Now Playing's names). */
export interface RequestView {
  request_id: number;
  track_id: string;
  external_id: string | null;
  artist: string | null;
  title: string | null;
  requester: string;
  user_platform: string | null;
  request_origin: string;
  timestamp: string;
}

export type RemovalReason = 'deleted' | 'cleared' | 'fulfilled';

interface SongRequestEvents {
  added: [RequestView];
  removed: [RequestView & { reason: RemovalReason; dbid?: number }];
}

/** What POST /v1/requests answers (What's Now Playing's fields, plus request_id). */
export type AddAnswer = {
  accepted: true;
  deduped: boolean;
  track_id: string;
  request_id: number;
  requester?: string;
  requestartist?: string | null;
  requesttitle?: string | null;
  requestedfor?: string | null;
  request_origin?: string;
  user_platform?: string | null;
};

/** Thrown for a request with nothing to look for: the route answers What's Now Playing's `{accepted: false}` body. */
export class EmptyRequest extends Error {}

export function viewOf(request: SongRequest): RequestView {
  return {
    request_id: request.id,
    track_id: requestTrackId(request.artist, request.title),
    external_id: request.externalId,
    artist: request.artist,
    title: request.title,
    requester: request.requester,
    user_platform: request.userPlatform,
    request_origin: request.origin,
    timestamp: new Date(request.createdAt).toISOString(),
  };
}

export class SongRequests extends EventEmitter<SongRequestEvents> {
  constructor(
    private readonly store: SongRequestStore,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    super();
    this.setMaxListeners(0);
  }

  /** Queues a request from a POST body (What's Now Playing's fields). */
  async add(body: Readonly<Record<string, unknown>>, origin = 'lumia'): Promise<AddAnswer> {
    const requester = textField(body, 'requester');
    if (!requester) throw new AppError('INVALID_PARAMETERS', 'requester is required');
    const platform = textField(body, 'user_platform');
    const externalId = textField(body, 'external_id');
    const query = textField(body, 'query', 500);
    let artist = textField(body, 'artist');
    let title = textField(body, 'title');
    let requestedFor: string | null = null;
    const structured = artist !== null && title !== null;
    const userInput = structured ? null : (query ?? artist ?? title);
    if (!structured) {
      // Structured artist + title are kept as given; anything else is read like a chat line.
      if (userInput === null) throw new EmptyRequest('empty request');
      ({ artist, title, requestedFor } = readRequestText(userInput));
    }
    const request: NewSongRequest = {
      requester,
      artist,
      title,
      normalizedArtist: normaliseName(artist),
      normalizedTitle: normaliseName(title),
      origin,
      userPlatform: platform,
      externalId,
      userInput,
      requestedFor,
      createdAt: this.now(),
    };
    const outcome = await this.store.add(request, { dedupeSince: request.createdAt - REQUEST_DEDUPE_MS, windowSince: request.createdAt - REQUEST_WINDOW_MS });
    if (outcome.state === 'full') throw new AppError('REQUEST_QUEUE_FULL');
    if (outcome.state === 'requester-full') {
      this.logger.warn(`song requests: requester ${JSON.stringify(requester)} has too many requests waiting; refused`);
      throw new AppError('REQUESTER_QUEUE_FULL');
    }
    if (outcome.state === 'window-full') throw new AppError('REQUEST_RATE_EXCEEDED');
    const trackId = requestTrackId(outcome.request.artist, outcome.request.title);
    if (outcome.state === 'deduped') return { accepted: true, deduped: true, track_id: trackId, request_id: outcome.request.id };
    this.emit('added', viewOf(outcome.request));
    return {
      accepted: true,
      deduped: false,
      track_id: trackId,
      request_id: outcome.request.id,
      requester,
      requestartist: artist,
      requesttitle: title,
      ...(structured ? { request_origin: origin, user_platform: platform } : { requestedfor: requestedFor }),
    };
  }

  async list(): Promise<RequestView[]> {
    return (await this.store.list()).map(viewOf);
  }

  async remove(id: number): Promise<RequestView | null> {
    const removed = await this.store.remove(id);
    if (removed) this.announceRemoved([removed], 'deleted');
    return removed ? viewOf(removed) : null;
  }

  /** Removes the requests for an artist and title (only `requester`'s when given); answers how many. */
  async removeByIdentity(artist: string, title: string, requester?: string): Promise<number> {
    const normalizedArtist = normaliseName(artist);
    const normalizedTitle = normaliseName(title);
    if (!normalizedArtist || !normalizedTitle) return 0;
    const removed = await this.store.removeByIdentity(normalizedArtist, normalizedTitle, requester);
    this.announceRemoved(removed, 'deleted');
    return removed.length;
  }

  async clear(): Promise<number> {
    const removed = await this.store.clear();
    this.announceRemoved(removed, 'cleared');
    return removed.length;
  }

  /**
   * The request a newly stored `record` fulfils, removed from the queue; undefined when it fulfils
   * none. Called once per new record by the instance that stored it. Never throws.
   */
  async fulfil(record: TrackRecord): Promise<RequestView | undefined> {
    try {
      const queue = await this.store.list();
      const played = { artist: fieldText(record.metadata, 'artist'), title: fieldText(record.metadata, 'title') };
      const match = await inSlices(fulfilmentSteps(played, queue));
      // Another instance may have fulfilled it meanwhile: only the one whose delete removed it tells.
      const removed = match ? await this.store.remove(match.id) : null;
      if (!removed) return undefined;
      this.announceRemoved([removed], 'fulfilled', record.dbid);
      return viewOf(removed);
    } catch (error) {
      this.logger.warn(`song requests: track ${record.dbid} not matched against the queue: ${errorMessage(error)}`);
      return undefined;
    }
  }

  private announceRemoved(removed: readonly SongRequest[], reason: RemovalReason, dbid?: number): void {
    for (const request of removed) this.emit('removed', { ...viewOf(request), reason, ...(dbid === undefined ? {} : { dbid }) });
  }
}

/** Runs a sliced search to its end, letting other work run at every step (setImmediate: after pending I/O). */
async function inSlices<T>(steps: Generator<void, T>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * A text field of the body: null bytes removed, cut to `max` code points, trimmed; null when
 * absent or blank. A value that is not a string is a 400.
 */
function textField(body: Readonly<Record<string, unknown>>, name: string, max = MAX_REQUEST_FIELD): string | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new AppError('INVALID_PARAMETERS', `'${name}' must be a string`);
  const text = [...value.replaceAll('\0', '')].slice(0, max).join('').trim();
  return text === '' ? null : text;
}
