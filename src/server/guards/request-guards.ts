import { isIP } from 'node:net';
import { allowedHostMatcher, isLoopbackHost } from '../../domain/host-names';

// Pure checks of who may talk to svc (docs/decisions.md "Hostile clients and browsers"), shared by
// the Koa middleware, the /v1/last fast path and the WebSocket upgrade.

/**
 * The host name of a `Host` header (RFC 9110 section 7.2: uri-host [":" port]), lower-cased,
 * without its port or IPv6 brackets; null for anything else (`localhost:evil.example`, spaces,
 * a port that is not digits), which no listener answers to.
 */
function hostName(hostHeader: string): string | null {
  const value = hostHeader.toLowerCase();
  const match = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9._~-]+))(?::(\d{1,5}))?$/.exec(value);
  if (!match) return null;
  return match[1] ?? match[2] ?? null;
}

/**
 * DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 talks to svc with
 * `Host: evil.example`. On a loopback listener only loopback names and `allowedHosts` pass.
 * Returns null when every Host passes (a listener on a LAN or wildcard address).
 */
export function hostCheck(listenHost: string, allowedHosts: readonly string[]): ((hostHeader: string | undefined) => boolean) | null {
  if (!isLoopbackHost(listenHost)) return null;
  const allowed = allowedHostMatcher(allowedHosts);
  const decide = (hostHeader: string): boolean => {
    const name = hostName(hostHeader);
    if (name === null) return false;
    if (name === 'localhost' || allowed(name)) return true;
    return (isIP(name) === 4 && name.startsWith('127.')) || name === '::1';
  };
  // Overlays poll with the same Host every time: remember the last answer (the /v1/last hot path).
  let lastHeader = '';
  let lastAnswer = false;
  return function hostAllowed(hostHeader) {
    // HTTP/1.0 without Host: not a browser (browsers always send Host).
    if (hostHeader === undefined || hostHeader === '') return true;
    if (hostHeader !== lastHeader) {
      lastAnswer = decide(hostHeader);
      lastHeader = hostHeader;
    }
    return lastAnswer;
  };
}

/**
 * The 421 text: names the Host and the config key that lets it in, since the usual cause is a
 * tunnel or a public name in front of a loopback listener (docs/running.md "Tunnels and public names").
 */
export function unknownHostMessage(hostHeader: string): string {
  const host = hostHeader.slice(0, 256);
  return `Unknown host: ${host} (to answer to this name, add "${hostName(host)}" to allowedHosts in the config)`;
}

export interface WriteRequest {
  origin: string | undefined;
  secFetchSite: string | undefined;
  /** The origin this request was sent to: `http://` + its Host header. */
  ownOrigin: string;
}

/**
 * Browser writes: refused when the page is on another origin (its `Origin`, or
 * `Sec-Fetch-Site` for requests that carry no Origin, such as an `<img>` GET), unless the
 * origin is listed in `writeOrigins`. Non-browser clients send neither header and pass.
 */
export function writeOriginCheck(writeOrigins: readonly string[]): (request: WriteRequest) => boolean {
  const listed = new Set(writeOrigins);
  return function writeAllowed({ origin, secFetchSite, ownOrigin }) {
    if (origin !== undefined && listed.has(origin)) return true;
    if (origin !== undefined && origin !== ownOrigin) return false;
    const site = secFetchSite?.trim().toLowerCase();
    return site !== 'cross-site' && site !== 'same-site';
  };
}

/** Writes: every method on /v1/remoteinput (a GET submits), and any method that changes state. */
export function isWriteRequest(method: string, path: string): boolean {
  // The router matches paths case-insensitively and with a trailing slash, so compare the same way.
  const route = path.toLowerCase().replace(/\/+$/, '');
  if (route === '/v1/remoteinput') return method !== 'OPTIONS';
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
}

/**
 * Reads that show listeners' addresses and counts (docs/reports.md "Over HTTP", GET /v1/listeners:
 * docs/play-log.md "Listeners you can see"): guarded like a
 * write, so a page on another origin cannot read them through the user's browser and a link
 * never downloads one.
 */
export function isPrivateRead(path: string): boolean {
  return /^\/v1\/(reports|listeners)(\/|$)/i.test(path);
}

/**
 * A browser navigation (a link, a typed address, a redirect to one): Chromium marks a link
 * opened from outside the browser that redirects to GET /v1/remoteinput as a direct visit, so
 * Sec-Fetch-Site cannot tell it from the DJ's own; Sec-Fetch-Mode and Sec-Fetch-Dest can. DJ
 * software and scripts send neither (docs/limits-and-load.md "Browser navigations").
 */
export function isBrowserNavigation(secFetchMode: string, secFetchDest: string): boolean {
  return secFetchMode.trim().toLowerCase() === 'navigate' || secFetchDest.trim().toLowerCase() === 'document';
}
