import { errorMessage } from '../errors';
import { SharedFlights, deadlineSignal } from '../signals';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { classifyAddress, isAllowedAddress, type GuardPolicy } from './address-guard';
import { MAX_IMAGE_BYTES, SNIFF_BYTES, sniffImageType, type ImageMimeType } from '../domain/image';
import { hasHttpScheme } from '../domain/http-url';
import { HostSlots, Slots, crawling } from './download-slots';

// The one image downloader: submitted cover URLs and enrichment images alike (docs/streams.md
// "Submitted cover URLs"). Every address a host name resolves to is checked before a socket is
// opened, inside the connection's own `lookup`, so a DNS answer cannot change between the
// check and the connect (rebinding). Redirects are followed by hand and checked again per hop.

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_REDIRECTS = 3;
/** docs/decisions.md "Hostile clients and browsers": `images.maxConcurrentDownloads`. */
const DEFAULT_MAX_CONCURRENT_DOWNLOADS = 4;
/**
 * While others wait for a slot, a download that has held one for a second with less than 8 KiB/s
 * on average gives it up (docs/limits-and-load.md "Cover downloads"): a cover is 50 to 500 KB,
 * so a healthy host is far above it, and a stalled one frees its slot in about a second, not 10.
 */
const CRAWLING = { graceMs: 1000, minBytesPerSecond: 8 * 1024 };
const CRAWL_CHECK_EVERY_MS = 250;
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export type FetchFailure = 'bad-url' | 'refused-address' | 'too-many-redirects' | 'http-status' | 'too-large' | 'not-an-image' | 'timeout' | 'network';

export class ImageFetchError extends Error {
  constructor(
    readonly reason: FetchFailure,
    message: string,
  ) {
    super(message);
    this.name = 'ImageFetchError';
  }
}

export type Resolver = (hostname: string) => Promise<readonly dns.LookupAddress[]>;

const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export interface ImageFetcherOptions extends GuardPolicy {
  userAgent: string;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /** Downloads running at once; more wait for a slot (the time limit starts with the download). */
  maxConcurrentDownloads?: number;
  /** Name resolution; tests inject one to map names to loopback without DNS. */
  resolve?: Resolver;
  /**
   * Replaces the address check. Tests only: all their servers are on loopback, so one loopback
   * address has to stand in for "a public host" to show that a redirect to loopback is refused.
   */
  allowAddress?: AddressCheck;
}

export type AddressCheck = (address: string) => boolean;

export interface FetchedImage {
  bytes: Buffer;
  mimeType: ImageMimeType;
}

export type ImageFetcher = (url: string, signal?: AbortSignal) => Promise<FetchedImage>;

/** An http(s) URL without credentials, or null: anything else is never fetched. */
export function parseFetchableUrl(text: string): URL | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (!hasHttpScheme(url)) return null;
  if (url.username !== '' || url.password !== '' || url.hostname === '') return null;
  return url;
}

export function createImageFetcher(options: ImageFetcherOptions): ImageFetcher {
  const maxBytes = options.maxBytes ?? MAX_IMAGE_BYTES;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const allowed: AddressCheck = options.allowAddress ?? ((address) => isAllowedAddress(address, options));
  const lookup = guardedLookup(options.resolve ?? systemResolver, allowed);
  const headers = { 'User-Agent': options.userAgent, Accept: 'image/jpeg, image/png, image/webp, image/gif' };

  const slotCount = options.maxConcurrentDownloads ?? DEFAULT_MAX_CONCURRENT_DOWNLOADS;
  const slots = new Slots(slotCount);
  const perHost = new HostSlots(Math.ceil(slotCount / 2));
  // Keyed by the URL as given: concurrent callers of one URL share one download, every hop included.
  const downloads = new SharedFlights<FetchedImage>();
  const download = async (text: string, signal: AbortSignal): Promise<FetchedImage> => {
    // A host's own turn first: downloads queued behind a slow host hold no shared slot.
    const releaseHost = await perHost.acquire(parseFetchableUrl(text)?.host ?? '', signal);
    try {
      const release = await slots.acquire(signal);
      try {
        return await downloadOnce(text, signal);
      } finally {
        release();
      }
    } finally {
      releaseHost();
    }
  };

  return (text, signal) => downloads.run(text, (flightSignal) => download(text, flightSignal), signal);

  async function downloadOnce(text: string, signal: AbortSignal): Promise<FetchedImage> {
    let url = parseFetchableUrl(text);
    if (!url) throw new ImageFetchError('bad-url', 'only http(s) URLs without credentials are fetched');
    const progress = { bytes: 0 };
    const crawl = watchCrawl(progress, () => slots.contended());
    const deadline = deadlineSignal(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, [signal, crawl.signal]);
    const combined = deadline.signal;
    try {
      for (let hop = 0; ; hop += 1) {
        checkLiteralHost(url, allowed);
        const outcome = await requestOnce(url, { headers, lookup, maxBytes, signal: combined, progress });
        if ('image' in outcome) return outcome.image;
        if (hop === maxRedirects) throw new ImageFetchError('too-many-redirects', `more than ${maxRedirects} redirects`);
        const next = parseFetchableUrl(new URL(outcome.location, url).href);
        if (!next) throw new ImageFetchError('bad-url', 'redirected to a URL that is not http(s)');
        url = next;
      }
    } catch (error) {
      if (error instanceof ImageFetchError) throw error;
      if (crawl.signal.aborted) throw crawl.signal.reason;
      if (deadline.timedOut()) throw new ImageFetchError('timeout', `no complete image within ${options.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`);
      if (signal.aborted) throw signal.reason;
      throw new ImageFetchError('network', `${url.host}: ${errorMessage(error)}`);
    } finally {
      crawl.stop();
      deadline.dispose();
    }
  }
}

/** Aborts (with a 'timeout' ImageFetchError) once the download crawls while `contended()`. */
function watchCrawl(progress: { bytes: number }, contended: () => boolean): { signal: AbortSignal; stop: () => void } {
  const controller = new AbortController();
  const started = performance.now();
  const timer = setInterval(() => {
    const heldMs = performance.now() - started;
    if (!contended() || !crawling(heldMs, progress.bytes, CRAWLING)) return;
    const rate = Math.round(progress.bytes / 1024 / (heldMs / 1000));
    controller.abort(new ImageFetchError('timeout', `too slow (${rate} KiB/s) while other downloads waited`));
    clearInterval(timer);
  }, CRAWL_CHECK_EVERY_MS);
  timer.unref();
  return { signal: controller.signal, stop: () => clearInterval(timer) };
}

/** An IP literal never reaches `lookup` (net connects to it directly), so it is checked here. */
function checkLiteralHost(url: URL, allowed: AddressCheck): void {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (net.isIP(host) !== 0 && !allowed(host)) {
    throw new ImageFetchError('refused-address', `${host} is a ${classifyAddress(host)} address`);
  }
}

/** A `lookup` for net.connect that resolves, refuses the host if ANY address is not allowed, then connects. */
function guardedLookup(resolve: Resolver, allowed: AddressCheck): net.LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const refused = addresses.find((entry) => !allowed(entry.address));
        if (refused) {
          const kind = classifyAddress(refused.address);
          callback(new ImageFetchError('refused-address', `${hostname} resolves to a ${kind} address (${refused.address})`), '');
          return;
        }
        const family = familyNumber(lookupOptions.family);
        const usable = family === 0 ? addresses : addresses.filter((entry) => entry.family === family);
        const first = usable[0];
        if (!first) {
          callback(new ImageFetchError('network', `${hostname} has no usable address`), '');
          return;
        }
        if (lookupOptions.all) callback(null, [...usable]);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

function familyNumber(family: number | string | undefined): number {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

interface RequestSettings {
  headers: Record<string, string>;
  lookup: net.LookupFunction;
  maxBytes: number;
  signal: AbortSignal;
  /** Body bytes received so far, every hop together (the crawl watch reads it). */
  progress: { bytes: number };
}

type HopOutcome = { image: FetchedImage } | { location: string };

function requestOnce(url: URL, settings: RequestSettings): Promise<HopOutcome> {
  return new Promise((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http;
    // agent: false: a fresh connection per request, so no pooled socket skips the lookup check.
    const request = transport.request(url, { method: 'GET', headers: settings.headers, agent: false, lookup: settings.lookup, signal: settings.signal });
    request.on('error', reject);
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const fail = (error: ImageFetchError) => {
        response.destroy();
        reject(error);
      };
      if (REDIRECT_STATUSES.has(status)) {
        const location = response.headers.location;
        if (!location) return fail(new ImageFetchError('http-status', `${url.host} answered ${status} without a Location`));
        response.destroy();
        return resolve({ location });
      }
      if (status !== 200 && status !== 203) return fail(new ImageFetchError('http-status', `${url.host} answered ${status}`));
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > settings.maxBytes) {
        return fail(new ImageFetchError('too-large', `image is ${declared} bytes, over the ${settings.maxBytes} byte limit`));
      }
      collectBody(response, settings.maxBytes, settings.progress).then((image) => resolve({ image }), reject);
    });
    request.end();
  });
}

/** Reads the body up to `maxBytes`, giving up early when the first bytes are not an image. */
function collectBody(response: http.IncomingMessage, maxBytes: number, progress: { bytes: number }): Promise<FetchedImage> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let sniffed = false;
    const fail = (error: Error) => {
      response.destroy();
      reject(error);
    };
    response.on('data', (chunk: Buffer) => {
      total += chunk.length;
      progress.bytes += chunk.length;
      if (total > maxBytes) return fail(new ImageFetchError('too-large', `image is over the ${maxBytes} byte limit`));
      chunks.push(chunk);
      if (!sniffed && total >= SNIFF_BYTES) {
        sniffed = true;
        if (!sniffImageType(Buffer.concat(chunks))) fail(notAnImage());
      }
    });
    response.on('end', () => {
      const bytes = Buffer.concat(chunks, total);
      const mimeType = sniffImageType(bytes);
      if (mimeType) resolve({ bytes, mimeType });
      else reject(notAnImage());
    });
    response.on('error', reject);
    response.on('close', () => {
      if (!response.complete) reject(new ImageFetchError('network', 'connection closed before the image was complete'));
    });
  });
}

function notAnImage(): ImageFetchError {
  return new ImageFetchError('not-an-image', 'the response is not a JPEG, PNG, WebP or GIF image');
}
