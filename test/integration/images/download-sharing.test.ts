import type http from 'node:http';
import { createImageFetcher } from '../../../src/images/fetch-image';
import { makePng } from '../../helpers/images';
import { redirectTo, serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';

// One download per URL in flight (redirect hops included) and at most `maxConcurrentDownloads`
// downloads at a time (docs/decisions.md "Hostile clients and browsers"), against a real local image host.

const png = makePng(4, 4, [10, 20, 30], [200, 100, 0]);

describe('shared image downloads', () => {
  let host: ImageHost;
  beforeEach(async () => {
    host = await startImageHost('127.0.0.1');
  });
  afterEach(() => host.close());

  it('When 20 callers ask for the same redirecting URL at once, then each hop is requested once and all get the image', async () => {
    host.route('/front-1200', redirectTo('/hop'));
    host.route('/hop', redirectTo('/cover.png', 307));
    host.route('/cover.png', serveBytes(png, 'image/png'));
    const fetchImage = createImageFetcher({ userAgent: 'svc-test', allowPrivateAddresses: true });
    const images = await Promise.all(Array.from({ length: 20 }, () => fetchImage(`${host.url}/front-1200`, new AbortController().signal)));
    for (const image of images) expect(image.bytes.equals(png)).toBe(true);
    expect(host.requests).toEqual(['/front-1200', '/hop', '/cover.png']);
  });

  it('When one of two callers gives up, then the other still gets the image; when the last gives up, the download stops', async () => {
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    let held: http.ServerResponse | undefined;
    const closed = new Promise<void>((resolve) => {
      host.route('/slow.png', (_request, response) => {
        held = response;
        response.on('close', () => resolve());
        arrived();
      });
    });
    const fetchImage = createImageFetcher({ userAgent: 'svc-test', allowPrivateAddresses: true });
    const first = new AbortController();
    const second = new AbortController();
    const firstResult = fetchImage(`${host.url}/slow.png`, first.signal);
    const secondResult = fetchImage(`${host.url}/slow.png`, second.signal);
    await arrival;
    first.abort(new Error('first gave up'));
    await expect(firstResult).rejects.toThrow('first gave up');
    held?.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': png.length }).end(png);
    expect((await secondResult).bytes.equals(png)).toBe(true);
    expect(host.requests).toEqual(['/slow.png']);

    // Now alone: the second caller leaving cancels the request itself.
    host.requests.length = 0;
    const third = new AbortController();
    let arrivedAgain!: () => void;
    const arrivalAgain = new Promise<void>((resolve) => (arrivedAgain = resolve));
    let socketClosed!: () => void;
    const closedAgain = new Promise<void>((resolve) => (socketClosed = resolve));
    host.route('/slow.png', (request) => {
      request.socket.on('close', () => socketClosed());
      arrivedAgain();
    });
    const thirdResult = fetchImage(`${host.url}/slow.png`, third.signal);
    await arrivalAgain;
    third.abort(new Error('third gave up'));
    await expect(thirdResult).rejects.toThrow('third gave up');
    await closedAgain;
    await closed;
  });

  it('When more distinct images are asked than maxConcurrentDownloads, then at most that many requests are open at once', async () => {
    // Two hosts: one host alone gets at most half the slots (docs/limits-and-load.md "Cover downloads").
    const other = await startImageHost('127.0.0.2');
    const hostOf = (index: number) => (index % 2 === 0 ? host : other);
    const held: http.ServerResponse[] = [];
    const openAtArrival: number[] = [];
    let onArrival: (() => void) | undefined;
    const paths = Array.from({ length: 6 }, (_, index) => `/image-${index}.png`);
    for (const [index, path] of paths.entries()) {
      hostOf(index).route(path, (_request, response) => {
        held.push(response);
        openAtArrival.push(held.filter((candidate) => !candidate.writableEnded).length);
        onArrival?.();
      });
    }
    const arrivals = (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (held.length >= count) resolve();
        };
        onArrival = check;
        check();
      });
    const fetchImage = createImageFetcher({ userAgent: 'svc-test', allowPrivateAddresses: true, maxConcurrentDownloads: 2 });
    const results = paths.map((path, index) => fetchImage(`${hostOf(index).url}${path}`, new AbortController().signal));

    await arrivals(2);
    // Answer one at a time: each answer frees a slot, and only then does the next request arrive.
    for (let answered = 0; answered < paths.length; answered += 1) {
      held[answered]?.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': png.length }).end(png);
      if (answered + 2 < paths.length) await arrivals(answered + 3);
    }
    await Promise.all(results);
    expect(openAtArrival).toHaveLength(6);
    expect(Math.max(...openAtArrival)).toBe(2);
    await other.close();
  });
});
