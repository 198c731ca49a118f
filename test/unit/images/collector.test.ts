import { ImageCollector } from '../../../src/images/collector';
import { ImageFetchError, type ImageFetcher } from '../../../src/images/fetch-image';
import { silentLogger } from '../../helpers/silent-logger';
import { NowPlaying } from '../../../src/domain/current-track';
import { openSqliteStore } from '../../../src/store/open-store';
import { TINY_PNG } from '../../helpers/images';

function setUp(fetchImage: ImageFetcher) {
  const db = openSqliteStore(':memory:', { maxImageBytes: 1024 * 1024 });
  const { tracks, images: store } = db;
  const nowPlaying = new NowPlaying(null);
  const collector = new ImageCollector({ store, nowPlaying, fetchImage, logger: silentLogger });
  const submit = async (title: string) => {
    const record = await tracks.insert({ receivedSeq: await tracks.nextReceivedSeq(), receivedAt: new Date().toISOString(), metadata: { artist: 'A', title } });
    nowPlaying.offer(record);
    return record;
  };
  return { db, store, collector, submit };
}

describe('ImageCollector', () => {
  it('When a provider image URL fails, then later submissions do not ask for it again (for an hour)', async () => {
    const asked: string[] = [];
    const { db, collector, submit } = setUp(async (url) => {
      asked.push(url);
      throw new ImageFetchError('http-status', 'HTTP 404');
    });
    const candidate = { category: 'fanart' as const, url: 'http://images.invalid/gone.jpg', source: 'theaudiodb' };
    await collector.collect(await submit('One'), undefined, [candidate]);
    await collector.idle();
    await collector.collect(await submit('Two'), undefined, [candidate]);
    await collector.idle();
    expect(asked).toEqual([candidate.url]);
    await db.close();
  });

  it('When a provider image was downloaded once, then a track seen again gets it linked at once, announced, without a download', async () => {
    let downloads = 0;
    const { db, store, collector, submit } = setUp(async () => {
      downloads += 1;
      return { bytes: TINY_PNG, mimeType: 'image/png' };
    });
    const candidates = [{ category: 'cover' as const, url: 'http://images.invalid/front.png', source: 'coverartarchive' }];
    await collector.collect(await submit('First play'), undefined, candidates);
    await collector.idle();
    expect(downloads).toBe(1);

    const cover = await collector.knownCover(candidates);
    expect(cover?.source).toBe('coverartarchive');
    const announced: string[] = [];
    collector.on('image', (image) => announced.push(image.category));
    const again = await submit('Second play');
    // Linked and announced by the time collect() resolves, before any background download.
    await collector.collect(again, cover, candidates);
    expect((await store.imagesOf(again.dbid)).map((image) => image.category)).toEqual(['cover']);
    expect(announced).toEqual(['cover']);
    await collector.idle();
    expect(downloads).toBe(1);
    await db.close();
  });
});
