import type { ImageCategory } from '../../../../../src/domain/track';
import type { StoredImage } from '../../../../../src/store/images';
import { WS_ERROR_CODES, type ReplyFrame } from '../../../../../src/server/streams/ws/frames';
import { answerMessage, replyText, type ImageLookup } from '../../../../../src/server/streams/ws/requests';

// The image clients' request/response messages, without a socket: every message type and every
// error code, in the shapes What's Now Playing clients expect.

const fanart = { key: 'f'.repeat(64), mimeType: 'image/jpeg' as const, size: 3, bytes: Buffer.from([1, 2, 3]) };
const cover = { key: 'c'.repeat(64), mimeType: 'image/png' as const, size: 2, bytes: Buffer.from([9, 8]) };

function lookup(): ImageLookup & { queries: unknown[] } {
  const queries: unknown[] = [];
  return {
    queries,
    async find(query: { category: ImageCategory; artistKey: string; albumKey?: string }): Promise<StoredImage[]> {
      queries.push(query);
      if (query.artistKey === 'bjork' && query.category === 'fanart' && query.albumKey === undefined) return [fanart];
      if (query.artistKey === 'bjork' && query.category === 'cover' && query.albumKey === 'homogenic') return [cover];
      return [];
    },
    meta: async (key) => [fanart, cover].find((image) => image.key === key) ?? null,
    slice: async (key, offset, length) => [fanart, cover].find((image) => image.key === key)?.bytes.subarray(offset, offset + length) ?? null,
  };
}

/** The answer as a client reads it: the fragments of a streamed reply joined up. */
const ask = async (message: unknown, images: ImageLookup = lookup()): Promise<ReplyFrame> => {
  const answer = await answerMessage(typeof message === 'string' ? message : JSON.stringify(message), { images, version: '1.2.3', pick: () => 0 });
  const text = replyText(answer, images);
  if (typeof text === 'string') return JSON.parse(text) as ReplyFrame;
  const parts: string[] = [];
  for await (const part of text) parts.push(part);
  return JSON.parse(parts.join('')) as ReplyFrame;
};

describe('image client messages', () => {
  it('When a client says hello, then the server welcomes it', async () => {
    expect(await ask({ type: 'hello', client: 'slideshow' })).toEqual({ type: 'welcome', server: 'svc', version: '1.2.3', status: 'ready' });
  });

  it('When an artist image exists, then get_images answers image_data in base64, matched by normalized name', async () => {
    const images = lookup();
    expect(await ask({ type: 'get_images', category: 'fanart', data_type: 'artist', parameters: { artist: 'BJÖRK' } }, images)).toEqual({
      type: 'image_data',
      data_type: 'artist',
      category: 'fanart',
      artist: 'BJÖRK',
      image_data: 'AQID',
      key: fanart.key,
      url: `cover/${fanart.key}`,
      mime_type: 'image/jpeg',
    });
    expect(images.queries).toEqual([{ category: 'fanart', artistKey: 'bjork' }]);
  });

  it('When an album cover exists, then get_images answers it; `datatype` and top-level names are accepted too', async () => {
    const reply = await ask({ type: 'get_images', category: 'cover', datatype: 'album', artist: 'Björk', album: 'Homogenic' });
    expect(reply).toMatchObject({
      type: 'image_data',
      data_type: 'album',
      category: 'cover',
      artist: 'Björk',
      album: 'Homogenic',
      image_data: 'CQg=',
      mime_type: 'image/png',
    });
  });

  it('When nothing is stored, then get_images answers no_image with a message', async () => {
    expect(await ask({ type: 'get_images', category: 'logo', data_type: 'artist', parameters: { artist: 'Nobody' } })).toEqual({
      type: 'no_image',
      data_type: 'artist',
      category: 'logo',
      artist: 'Nobody',
      message: 'No logo images found for Nobody',
    });
    expect(await ask({ type: 'get_images', category: 'cover', data_type: 'album', parameters: { artist: 'Björk', album: 'Post' } })).toMatchObject({
      type: 'no_image',
      album: 'Post',
      message: 'No cover images found for "Post" by Björk',
    });
  });

  it('When a client lists images, then image_list carries the keys, their total and fetchable URLs', async () => {
    expect(await ask({ type: 'list_images', data_type: 'artist', category: 'fanart', parameters: { artist: 'bjork' } })).toEqual({
      type: 'image_list',
      data_type: 'artist',
      category: 'fanart',
      artist: 'bjork',
      cache_keys: [fanart.key],
      total: 1,
      images: [{ key: fanart.key, url: `cover/${fanart.key}`, mime_type: 'image/jpeg' }],
    });
    expect(await ask({ type: 'list_images', data_type: 'album', category: 'cover', parameters: { artist: 'x', album: 'y' } })).toMatchObject({
      type: 'image_list',
      cache_keys: [],
      total: 0,
    });
  });

  const errors: [string, unknown, string][] = [
    ['INVALID_JSON', '{"type": "hello"', 'Invalid JSON in message'],
    ['BAD_STRUCTURE', [1, 2], 'request was not understood'],
    ['BAD_STRUCTURE', { type: 42 }, 'request was not understood'],
    ['BAD_STRUCTURE', 'null', 'request was not understood'],
    ['UNKNOWN_MESSAGE_TYPE', { type: 'subscribe' }, 'Unknown message type: subscribe'],
    ['MISSING_CATEGORY', { type: 'get_images', data_type: 'artist', parameters: { artist: 'a' } }, 'category is required'],
    ['MISSING_DATATYPE', { type: 'get_images', category: 'fanart', parameters: { artist: 'a' } }, 'datatype is required'],
    ['MISSING_DATATYPE', { type: 'list_images', category: 'fanart' }, 'datatype is required'],
    ['MISSING_CATEGORY', { type: 'list_images', data_type: 'artist' }, 'category is required'],
    ['MISSING_PARAMETERS', { type: 'get_images', category: 'fanart', data_type: 'artist', parameters: 'bjork' }, 'parameters are required'],
    ['MISSING_PARAMETERS', { type: 'list_images', category: 'fanart', data_type: 'artist', parameters: [] }, 'parameters are required'],
    ['UNSUPPORTED_DATA_TYPE', { type: 'get_images', category: 'fanart', data_type: 'track', parameters: { artist: 'a' } }, 'Data type "track" not supported'],
    ['MISSING_ARTIST', { type: 'get_images', category: 'fanart', data_type: 'artist', parameters: {} }, 'artist is required'],
    ['MISSING_ARTIST', { type: 'get_images', category: 'fanart', data_type: 'artist' }, 'artist is required'],
    ['MISSING_ALBUM', { type: 'get_images', category: 'cover', data_type: 'album', parameters: { artist: 'a' } }, 'album is required'],
    [
      'UNSUPPORTED_CATEGORY',
      { type: 'get_images', category: 'cover', data_type: 'artist', parameters: { artist: 'a' } },
      'Category "cover" not supported for artists',
    ],
    [
      'UNSUPPORTED_CATEGORY',
      { type: 'list_images', category: 'fanart', data_type: 'album', parameters: { artist: 'a', album: 'b' } },
      'Category "fanart" not supported for albums',
    ],
  ];
  for (const [code, message, text] of errors) {
    it(`When a client sends ${JSON.stringify(message).slice(0, 70)}, then the error is ${code}`, async () => {
      expect(await ask(message)).toEqual({ type: 'error', error_code: code, message: text });
    });
  }

  it('When the store fails, then the error is SERVER_ERROR', async () => {
    const broken: ImageLookup = {
      find: async () => {
        throw new Error('database is closed');
      },
      meta: async () => null,
      slice: async () => null,
    };
    expect(await ask({ type: 'get_images', category: 'fanart', data_type: 'artist', parameters: { artist: 'a' } }, broken)).toMatchObject({
      type: 'error',
      error_code: 'SERVER_ERROR',
    });
  });

  it('Every documented error code is produced by some message above', async () => {
    const produced = new Set([...errors.map(([code]) => code), 'SERVER_ERROR']);
    expect([...produced].sort()).toEqual([...WS_ERROR_CODES].sort());
  });
});
