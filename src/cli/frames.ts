import { isPlainObject } from '../domain/plain-object';
import type { ImageFrame, TrackFrame } from '../server/ws/frames';

// Recognizes the pushed frames of /v1/images/ws (shapes from src/server/ws/frames.ts, imported
// as types only so that the client never loads the server). Anything else is another kind of
// frame (welcome, image_data, error, ...) that the client commands pass over.

export type { ImageFrame, TrackFrame };

export function isTrackFrame(frame: unknown): frame is TrackFrame {
  return isPlainObject(frame) && frame.type === 'track' && typeof frame.dbid === 'number' && isPlainObject(frame.track);
}

export function isImageFrame(frame: unknown): frame is ImageFrame {
  return (
    isPlainObject(frame) &&
    frame.type === 'image' &&
    typeof frame.dbid === 'number' &&
    typeof frame.category === 'string' &&
    typeof frame.key === 'string' &&
    typeof frame.url === 'string' &&
    typeof frame.mime_type === 'string'
  );
}

/**
 * What makes a track frame "the same track" for the followers: the dbid, plus the names in
 * case a server started over with a fresh database and hands out the same dbid again. A later
 * frame for the same record (e.g. once its cover arrived) is not a new track.
 */
export function trackIdentity(frame: TrackFrame): string {
  return JSON.stringify([frame.dbid, frame.artist ?? null, frame.title ?? null, frame.album ?? null]);
}
