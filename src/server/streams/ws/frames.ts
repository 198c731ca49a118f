import { coverUrlFor } from '../../../domain/image';
import { fieldText, type ImageCategory, type TrackFields, type TrackImage } from '../../../domain/track';
import { recordJson } from '../../../domain/play';

// Frames of /v1/images/ws (docs/decisions.md "/v1/images/ws"). JSON text frames. Pure.
// Pushed by the server, unprompted:
//   track  on connect (when a track is current), on every track change, and again with the same
//          dbid each time enrichment fills in more of the current track
//   image  once per image as it becomes available for the current track (cover first); on
//          connect, one per image the current track already has
// Sent in answer to a client's message (ws/requests.ts):
//   welcome, image_data, no_image, image_list, error

/** The current track changed (or a client just connected). `track` is exactly the /v1/last body. */
export interface TrackFrame {
  type: 'track';
  dbid: number;
  artist?: string;
  title?: string;
  album?: string;
  /** `{dbid, ...processed_metadata}`, the same object GET /v1/last answers. */
  track: { dbid: number } & Record<string, unknown>;
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

// Answers to the request messages What's Now Playing image clients send (docs/streams.md lists each).

export interface WelcomeFrame {
  type: 'welcome';
  server: 'svc';
  version: string;
  status: 'ready';
}

export type DataType = 'artist' | 'album';

interface ImageQueryEcho {
  data_type: DataType;
  category: string;
  artist: string;
  album?: string;
}

/** One stored image, inline: `image_data` is the bytes in base64. */
export interface ImageDataFrame extends ImageQueryEcho {
  type: 'image_data';
  image_data: string;
  key: string;
  url: string;
  mime_type: string;
}

export interface NoImageFrame extends ImageQueryEcho {
  type: 'no_image';
  message: string;
}

/** The stored images that match, as keys (`cache_keys`, newest first) and fetchable URLs. */
export interface ImageListFrame extends ImageQueryEcho {
  type: 'image_list';
  cache_keys: string[];
  total: number;
  images: { key: string; url: string; mime_type: string }[];
}

export const WS_ERROR_CODES = [
  'INVALID_JSON',
  'BAD_STRUCTURE',
  'UNKNOWN_MESSAGE_TYPE',
  'MISSING_CATEGORY',
  'MISSING_DATATYPE',
  'MISSING_PARAMETERS',
  'UNSUPPORTED_DATA_TYPE',
  'MISSING_ARTIST',
  'MISSING_ALBUM',
  'UNSUPPORTED_CATEGORY',
  'SERVER_ERROR',
] as const;
export type WsErrorCode = (typeof WS_ERROR_CODES)[number];

export interface ErrorFrame {
  type: 'error';
  error_code: WsErrorCode;
  message: string;
}

export type ReplyFrame = WelcomeFrame | ImageDataFrame | NoImageFrame | ImageListFrame | ErrorFrame;

export function errorFrame(code: WsErrorCode, message: string): ErrorFrame {
  return { type: 'error', error_code: code, message };
}

export function imageFrame(image: TrackImage): ImageFrame {
  return {
    type: 'image',
    dbid: image.dbid,
    category: image.category,
    key: image.key,
    url: coverUrlFor(image.key),
    mime_type: image.mimeType,
    artist: image.artist,
    title: image.title,
    album: image.album,
  };
}

export function trackFrame(record: { dbid: number; metadata: TrackFields }): TrackFrame {
  return {
    type: 'track',
    dbid: record.dbid,
    artist: fieldText(record.metadata, 'artist'),
    title: fieldText(record.metadata, 'title'),
    album: fieldText(record.metadata, 'album'),
    track: recordJson(record),
  };
}
