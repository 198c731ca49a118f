import { coverUrlFor } from '../../../domain/image';
import { isPlainObject } from '../../../domain/plain-object';
import { IMAGE_CATEGORIES, type ImageCategory } from '../../../domain/track';
import type { CoversInFlight } from '../../../domain/covers-in-flight';
import { errorMessage } from '../../../errors';
import { sleep } from '../../../signals';
import { nameKey } from '../../../images/names';
import type { StoredImage } from '../../../store/images';
import { errorFrame, type DataType, type ImageDataFrame, type ImageListFrame, type NoImageFrame, type ReplyFrame, type WsErrorCode } from './frames';

// The request/response side of /v1/images/ws, as What's Now Playing image clients speak it:
// hello -> welcome; get_images -> image_data | no_image; list_images -> image_list; any
// problem -> error with an error_code. Artist images come in fanart/banner/logo/thumbnail,
// album images only as cover (the same split What's Now Playing makes).

export interface ImageLookup {
  find(query: { category: ImageCategory; artistKey: string; albumKey?: string }): Promise<StoredImage[]>;
  meta(key: string): Promise<StoredImage | null>;
  /** A piece of the stored bytes (see ImageStore.slice); null once the image is gone. */
  slice(key: string, offset: number, length: number): Promise<Buffer | null>;
}

/** An `image_data` answer before its bytes are read: they go out piece by piece (replyText). */
export interface ImageDataAnswer {
  head: Omit<ImageDataFrame, 'image_data'>;
  size: number;
}

export type Answer = Exclude<ReplyFrame, ImageDataFrame> | ImageDataAnswer;

/** Raw bytes per fragment of a streamed image: a multiple of 3, so the base64 pieces join up. */
const IMAGE_FRAGMENT_BYTES = 3 * 32 * 1024;

export interface RequestContext {
  images: ImageLookup;
  version: string;
  /** Picks one of `count` images for get_images; random by default, like the reference app. */
  pick?: (count: number) => number;
  /**
   * Waits for an album cover that is being fetched now, or (no album) for the artist images being
   * looked up and downloaded now (docs/decisions.md "Complete frames"); resolves true when there
   * was something to wait for (then the store is asked again).
   */
  awaitCover?: (artist: string, album?: string) => Promise<boolean>;
}

/**
 * awaitCover over the pipeline's image searches: matched by name as get_images matches
 * (names.ts), and waited for at most `maxWaitMs` (the enrichment deadline). An artist search is
 * a flight without an album (covers-in-flight.ts).
 */
export function coverWaiter(flights: Pick<CoversInFlight, 'matching'>, maxWaitMs: number): NonNullable<RequestContext['awaitCover']> {
  return async (artist, album = '') => {
    const artistKey = nameKey(artist);
    const albumKey = nameKey(album);
    const waiting = flights.matching(
      (flightArtist, flightAlbum) => nameKey(flightArtist) === artistKey && (album === '' ? flightAlbum === '' : nameKey(flightAlbum) === albumKey),
    );
    if (waiting.length === 0) return false;
    await Promise.race([Promise.all(waiting.map((flight) => flight.done)), sleep(maxWaitMs, undefined, { unref: true })]);
    return true;
  };
}

const ARTIST_CATEGORIES: ReadonlySet<string> = new Set(IMAGE_CATEGORIES.filter((c) => c !== 'cover'));

type Message = Record<string, unknown>;

class RequestError extends Error {
  constructor(
    readonly code: WsErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What goes out for an answer: a whole frame, or for image_data the fragments of
 * `{...head, "image_data": "<base64>"}`, each read from the store only when it is sent.
 */
export function replyText(answer: Answer, images: ImageLookup): string | AsyncIterable<string> {
  if (!('head' in answer)) return JSON.stringify(answer);
  return base64Fragments(answer.head, 'image_data', answer.size, (offset, length) => images.slice(answer.head.key, offset, length));
}

/** Fragments of `{...head, "<field>": "<base64 of size bytes>"}`; `read` is called lazily (the store is asynchronous). */
function base64Fragments(head: object, field: string, size: number, read: (offset: number, length: number) => Promise<Buffer | null>): AsyncGenerator<string> {
  return base64FieldFragments(head, [{ field, size, read }]);
}

export interface Base64Field {
  field: string;
  size: number;
  read: (offset: number, length: number) => Promise<Buffer | null>;
}

/** Fragments of `{...head, "<field>": "<base64>", ...}`, one image after the other, each read piece by piece. */
export async function* base64FieldFragments(head: object, fields: readonly Base64Field[]): AsyncGenerator<string> {
  const opening = JSON.stringify(head);
  let separator = opening === '{}' ? '' : ',';
  yield opening.slice(0, -1);
  for (const { field, size, read } of fields) {
    yield `${separator}${JSON.stringify(field)}:"`;
    separator = ',';
    // IMAGE_FRAGMENT_BYTES is a multiple of 3: the pieces' base64 joins into the whole's.
    for (let offset = 0; offset < size; offset += IMAGE_FRAGMENT_BYTES) {
      const part = await read(offset, IMAGE_FRAGMENT_BYTES);
      if (!part || part.length === 0) throw new Error('the image was removed while it was being sent');
      yield part.toString('base64');
    }
    yield '"';
  }
  yield '}';
}

/**
 * Whether a message asks for the push stream (docs/decisions.md): `{"type":"subscribe"}` alone
 * (no answer), or a `hello` with `"subscribe": true` (answered with welcome). Null otherwise.
 */
export function subscriptionIn(text: string): 'subscribe-only' | 'with-request' | null {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isPlainObject(message)) return null;
  if (message.type === 'subscribe') return 'subscribe-only';
  if (message.type === 'hello' && message.subscribe === true) return 'with-request';
  return null;
}

/** Answers one text message from a client. Never throws. */
export async function answerMessage(text: string, context: RequestContext): Promise<Answer> {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return errorFrame('INVALID_JSON', 'Invalid JSON in message');
  }
  try {
    if (!isPlainObject(message) || typeof message.type !== 'string') throw new RequestError('BAD_STRUCTURE', 'request was not understood');
    switch (message.type) {
      case 'hello':
        return { type: 'welcome', server: 'svc', version: context.version, status: 'ready' };
      case 'get_images': {
        const category = requiredString(message.category, 'category', 'MISSING_CATEGORY');
        const dataType = requiredString(message.data_type ?? message.datatype, 'datatype', 'MISSING_DATATYPE');
        return await getImages(parseQuery(message, category, dataType), context);
      }
      case 'list_images': {
        const dataType = requiredString(message.data_type ?? message.datatype, 'datatype', 'MISSING_DATATYPE');
        const category = requiredString(message.category, 'category', 'MISSING_CATEGORY');
        return await listImages(parseQuery(message, category, dataType), context);
      }
      default:
        throw new RequestError('UNKNOWN_MESSAGE_TYPE', `Unknown message type: ${message.type.slice(0, 64)}`);
    }
  } catch (error) {
    if (error instanceof RequestError) return errorFrame(error.code, error.message);
    return errorFrame('SERVER_ERROR', `Failed to get images: ${errorMessage(error)}`);
  }
}

interface ImageQuery {
  dataType: DataType;
  category: ImageCategory;
  artist: string;
  album?: string;
}

function parseQuery(message: Message, category: string, dataType: string): ImageQuery {
  // The reference clients put artist/album in `parameters`; top-level fields are accepted too.
  const parameters = message.parameters ?? { artist: message.artist, album: message.album };
  if (!isPlainObject(parameters)) throw new RequestError('MISSING_PARAMETERS', 'parameters are required');
  if (dataType !== 'artist' && dataType !== 'album') {
    throw new RequestError('UNSUPPORTED_DATA_TYPE', `Data type "${dataType.slice(0, 64)}" not supported`);
  }
  const artist = requiredString(parameters.artist, 'artist', 'MISSING_ARTIST');
  if (dataType === 'artist') {
    if (!ARTIST_CATEGORIES.has(category)) {
      throw new RequestError('UNSUPPORTED_CATEGORY', `Category "${category.slice(0, 64)}" not supported for artists`);
    }
    return { dataType, category: category as ImageCategory, artist };
  }
  const album = requiredString(parameters.album, 'album', 'MISSING_ALBUM');
  if (category !== 'cover') throw new RequestError('UNSUPPORTED_CATEGORY', `Category "${category.slice(0, 64)}" not supported for albums`);
  return { dataType, category: 'cover', artist, album };
}

function findImages(query: ImageQuery, context: RequestContext): Promise<StoredImage[]> {
  const artistKey = nameKey(query.artist);
  return context.images.find({
    category: query.category,
    artistKey,
    ...(query.album === undefined ? {} : { albumKey: nameKey(query.album) }),
  });
}

function echo(query: ImageQuery): { data_type: DataType; category: string; artist: string; album?: string } {
  return { data_type: query.dataType, category: query.category, artist: query.artist, ...(query.album === undefined ? {} : { album: query.album }) };
}

async function getImages(query: ImageQuery, context: RequestContext): Promise<ImageDataAnswer | NoImageFrame> {
  let found = await findImages(query, context);
  // The cover (or the artist's images) of a track just announced may be on its way: the answer waits for it.
  if (found.length === 0 && (await context.awaitCover?.(query.artist, query.album))) found = await findImages(query, context);
  const pick = context.pick ?? ((count: number) => Math.floor(Math.random() * count));
  // find() already read the chosen image's row (key, type, size): no second lookup by key.
  const image = found[Math.min(found.length - 1, Math.max(0, pick(found.length)))];
  if (!image) {
    const what =
      query.album === undefined ? `${query.category} images found for ${query.artist}` : `cover images found for "${query.album}" by ${query.artist}`;
    return { type: 'no_image', ...echo(query), message: `No ${what}` };
  }
  return {
    head: { type: 'image_data', ...echo(query), key: image.key, url: coverUrlFor(image.key), mime_type: image.mimeType },
    size: image.size,
  };
}

async function listImages(query: ImageQuery, context: RequestContext): Promise<ImageListFrame> {
  const found = await findImages(query, context);
  return {
    type: 'image_list',
    ...echo(query),
    cache_keys: found.map((image) => image.key),
    total: found.length,
    images: found.map((image) => ({ key: image.key, url: coverUrlFor(image.key), mime_type: image.mimeType })),
  };
}

function requiredString(value: unknown, name: string, code: WsErrorCode): string {
  if (typeof value !== 'string' || value === '') throw new RequestError(code, `${name} is required`);
  return value;
}
