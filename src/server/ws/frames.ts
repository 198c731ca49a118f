import type { ImageCategory, TrackFields } from '../../domain/track';

// Frames of /v1/images/ws (decisions.md "/v1/images/ws"). JSON text frames.
// Pushed by the server, unprompted:
//   track  on connect (when a track is current) and on every track change
//   image  once per image as it becomes available for the current track (cover first)

/** The current track changed (or a client just connected). `track` is exactly the /v1/last body. */
export interface TrackFrame {
  type: 'track';
  dbid: number;
  artist?: string;
  title?: string;
  album?: string;
  /** `{dbid, ...processed_metadata}`, the same object GET /v1/last answers. */
  track: { dbid: number } & TrackFields;
}

/** An image of a track is stored and can be fetched over HTTP. */
export interface ImageFrame {
  type: 'image';
  dbid: number;
  category: ImageCategory;
  /** SHA-256 of the bytes (hex): the image store key. */
  key: string;
  /** Relative reference resolved against the base URL, like `coverurl`: `cover/<key>`. */
  url: string;
  mime_type: string;
  artist?: string;
  title?: string;
  album?: string;
}

export type PushFrame = TrackFrame | ImageFrame;

export function trackFrame(record: { dbid: number; metadata: TrackFields }): TrackFrame {
  const text = (key: string) => (typeof record.metadata[key] === 'string' ? record.metadata[key] : undefined);
  return {
    type: 'track',
    dbid: record.dbid,
    artist: text('artist'),
    title: text('title'),
    album: text('album'),
    track: { dbid: record.dbid, ...record.metadata },
  };
}
