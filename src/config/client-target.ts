import type { FrozenConfig } from './schema';

// Where the client commands send requests when client.url / client.secret are unset: to the
// server this very config describes (docs/first-hour.md "One config for both ends"), so that
// `svc submit` in the folder where `svc serve` runs just works.

export interface ClientTarget {
  url: string;
  secret: string;
}

/** Listen addresses that mean "every interface": a client reaches them on loopback. */
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]', '']);

export function clientTarget(config: Pick<FrozenConfig, 'host' | 'port' | 'secret' | 'client'>): ClientTarget {
  return {
    url: config.client.url !== '' ? config.client.url : serverUrl(reachableHost(config.host), config.port),
    secret: config.client.secret !== '' ? config.client.secret : config.secret,
  };
}

/** The host a local client dials for a listen address. */
export function reachableHost(listenHost: string): string {
  return WILDCARD_HOSTS.has(listenHost) ? '127.0.0.1' : listenHost;
}

/** `http://host:port`, IPv6 addresses in brackets. */
export function serverUrl(host: string, port: number): string {
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}
