import { isPlainObject } from '../domain/plain-object';
import type { ImageFrame, TrackFrame } from '../server/streams/ws/frames';

// Recognizes the pushed frames of /v1/images/ws (shapes from src/server/streams/ws/frames.ts, imported
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
 * What makes a track frame worth showing to the followers: the dbid and the record's content. A
 * later frame of the same record with more fields (enrichment filled it in, docs/title-first.md)
 * is shown again; the same frame pushed again on a reconnect is not.
 */
export function trackIdentity(frame: { dbid: number; track: unknown }): string {
  return JSON.stringify([frame.dbid, frame.track]);
}
