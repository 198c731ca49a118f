import type { LookupAddress } from 'node:dns';
import { ImageFetchError, createImageFetcher, type FetchFailure, type ImageFetcherOptions } from '../../../src/images/fetch-image';
import { MAGIC, makePng } from '../../helpers/images';
import { afterDelay, redirectTo, serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';

// The image fetcher against real local HTTP servers. Every server is on loopback; a refused
// URL must never reach its server, which the servers' request logs prove.

const png = makePng(8, 8, [200, 40, 40], [40, 40, 200]);
const ua = { userAgent: 'svc-test' };

async function failure(promise: Promise<unknown>): Promise<FetchFailure> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ImageFetchError) return error.reason;
    throw error;
  }
  throw new Error('expected the fetch to fail');
}

describe('fetch-image', () => {
  let host: ImageHost;
  let standIn: ImageHost;
  beforeAll(async () => {
    host = await startImageHost('127.0.0.1');
    // 127.0.0.2 plays "a public host" for the tests that need one to redirect from.
    standIn = await startImageHost('127.0.0.2');
    host.route('/cover.png', serveBytes(png, 'image/png'));
    host.route('/page.html', serveBytes(Buffer.from('<!doctype html><html><body>hello</body></html>'), 'image/png'));
    host.route('/missing.png', (_req, res) => res.writeHead(404).end());
  });
  afterAll(async () => {
    await host.close();
    await standIn.close();
  });
  beforeEach(() => {
    host.requests.length = 0;
    standIn.requests.length = 0;
  });

  const lan = (extra: Partial<ImageFetcherOptions> = {}) => createImageFetcher({ ...ua, allowPrivateAddresses: true, ...extra });
  const guarded = (extra: Partial<ImageFetcherOptions> = {}) => createImageFetcher({ ...ua, allowPrivateAddresses: false, ...extra });
  /** The real guard, except that 127.0.0.2 counts as public. */
  const standInIsPublic = (address: string) => address === '127.0.0.2';

  describe('When private addresses are allowed', () => {
    it('then an image on a LAN host is fetched and its type sniffed from the bytes', async () => {
      const image = await lan()(`${host.url}/cover.png`);
      expect(image.mimeType).toBe('image/png');
      expect(image.bytes.equals(png)).toBe(true);
      expect(host.requests).toEqual(['/cover.png']);
    });

    it('then a body that is not an image is refused, whatever its Content-Type says', async () => {
      expect(await failure(lan()(`${host.url}/page.html`))).toBe('not-an-image');
    });

    it('then an error status is refused', async () => {
      expect(await failure(lan()(`${host.url}/missing.png`))).toBe('http-status');
    });

    it('then up to 3 redirects are followed and a 4th is refused before it is requested', async () => {
      host.route('/r1', redirectTo('/r2', 301));
      host.route('/r2', redirectTo(`${host.url}/r3`, 307));
      host.route('/r3', redirectTo('cover.png', 308));
      expect((await lan()(`${host.url}/r1`)).mimeType).toBe('image/png');
      host.requests.length = 0;
      host.route('/a1', redirectTo('/a2'));
      host.route('/a2', redirectTo('/a3'));
      host.route('/a3', redirectTo('/a4'));
      host.route('/a4', redirectTo('/cover.png'));
      expect(await failure(lan()(`${host.url}/a1`))).toBe('too-many-redirects');
      expect(host.requests).toEqual(['/a1', '/a2', '/a3', '/a4']);
    });

    it('then a declared or streamed body over the size limit is refused', async () => {
      const big = Buffer.concat([MAGIC.jpeg, Buffer.alloc(200_000)]);
      host.route('/declared.jpg', serveBytes(big, 'image/jpeg'));
      host.route('/streamed.jpg', (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'image/jpeg' });
        res.write(MAGIC.jpeg);
        const timer = setInterval(() => res.write(Buffer.alloc(16_384)), 5);
        res.on('close', () => clearInterval(timer));
      });
      expect(await failure(lan({ maxBytes: 100_000 })(`${host.url}/declared.jpg`))).toBe('too-large');
      expect(await failure(lan({ maxBytes: 100_000 })(`${host.url}/streamed.jpg`))).toBe('too-large');
    });

    it('then a server that is too slow to answer, or to finish, hits the time limit', async () => {
      host.route('/slow.png', afterDelay(3000, serveBytes(png)));
      host.route('/drip.png', (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'image/png' });
        res.write(png.subarray(0, 20));
      });
      // The slow image would arrive after 3 s and the drip never ends: 'timeout' is the 300 ms limit firing.
      expect(await failure(lan({ timeoutMs: 300 })(`${host.url}/slow.png`))).toBe('timeout');
      expect(await failure(lan({ timeoutMs: 300 })(`${host.url}/drip.png`))).toBe('timeout');
    });

    it('then URLs that are not http(s), or carry credentials, are never fetched', async () => {
      for (const url of [
        'file:///etc/passwd',
        'ftp://127.0.0.1/x.png',
        'data:image/png;base64,AAAA',
        'javascript:alert(1)',
        'not a url',
        `http://user:pw@127.0.0.1:${host.port}/cover.png`,
      ]) {
        expect(await failure(lan()(url))).toBe('bad-url');
      }
      host.route('/to-file', redirectTo('file:///etc/passwd'));
      expect(await failure(lan()(`${host.url}/to-file`))).toBe('bad-url');
      expect(host.requests).toEqual(['/to-file']);
    });
  });

  describe('When private addresses are not allowed (the default)', () => {
    it('then loopback literals, IPv6 and mapped forms included, are refused without a request', async () => {
      for (const url of [
        `${host.url}/cover.png`,
        `http://127.1.2.3:${host.port}/cover.png`,
        `http://[::ffff:127.0.0.1]:${host.port}/cover.png`,
        `http://[::1]:${host.port}/cover.png`,
        `http://0.0.0.0:${host.port}/cover.png`,
        `http://2130706433:${host.port}/cover.png`,
        `http://0x7f.0.0.1:${host.port}/cover.png`,
      ]) {
        expect([url, await failure(guarded()(url))]).toEqual([url, 'refused-address']);
      }
      expect(host.requests).toEqual([]);
    });

    it('then a name that resolves to loopback is refused without a request', async () => {
      expect(await failure(guarded()(`http://localhost:${host.port}/cover.png`))).toBe('refused-address');
      const resolve = async (): Promise<LookupAddress[]> => [{ address: '127.0.0.1', family: 4 }];
      expect(await failure(guarded({ resolve })(`http://images.example.test:${host.port}/cover.png`))).toBe('refused-address');
      expect(host.requests).toEqual([]);
    });

    it('then a name is refused when any one of its addresses is refused, even if the first is fine', async () => {
      const resolve = async (): Promise<LookupAddress[]> => [
        { address: '127.0.0.2', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ];
      const fetcher = guarded({ resolve, allowAddress: standInIsPublic });
      expect(await failure(fetcher(`http://images.example.test:${standIn.port}/cover.png`))).toBe('refused-address');
      expect(standIn.requests).toEqual([]);
    });

    it('then a redirect to loopback is refused before the target sees a request', async () => {
      standIn.route('/to-loopback.png', redirectTo(`${host.url}/cover.png`));
      standIn.route('/to-localhost.png', redirectTo(`http://localhost:${host.port}/cover.png`));
      standIn.route('/fine.png', serveBytes(png));
      const fetcher = guarded({ allowAddress: standInIsPublic });
      expect((await fetcher(`${standIn.url}/fine.png`)).mimeType).toBe('image/png');
      expect(await failure(fetcher(`${standIn.url}/to-loopback.png`))).toBe('refused-address');
      expect(await failure(fetcher(`${standIn.url}/to-localhost.png`))).toBe('refused-address');
      expect(standIn.requests).toEqual(['/fine.png', '/to-loopback.png', '/to-localhost.png']);
      expect(host.requests).toEqual([]);
    });
  });
});
