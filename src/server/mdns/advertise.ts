import makeMdns from 'multicast-dns';
import type { RemoteInfo } from 'node:dgram';
import type { DecodedPacket } from 'dns-packet';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log';
import { MDNS_PORT, announcement, answerQuery, type AdvertisedService } from './answer';

// The mDNS responder that announces svc as `_whatsnowplaying._tcp` (docs/whats-now-playing.md
// "Found on the network"), through the multicast-dns library; what it answers is answer.ts.
// A responder that cannot start (port 5353 refused) costs the advertisement, never the server.

export interface MdnsAdvertiser {
  /** Resolves once the socket is bound (or has failed: the warning is logged). */
  ready: Promise<void>;
  close(): Promise<void>;
}

export interface AdvertiseOptions {
  service: AdvertisedService;
  logger: Logger;
  /**
   * The library's socket options; the default is the mDNS group on every interface. A test binds
   * 127.0.0.1 on a port of its own with `multicast: false` and `announce: false`: nothing is sent
   * to a group.
   */
  socket?: makeMdns.Options;
  /** Sends the unsolicited announcement once the socket is ready (RFC 6762 section 8.3). */
  announce?: boolean;
}

export function advertiseOverMdns(options: AdvertiseOptions): MdnsAdvertiser {
  const { service, logger } = options;
  const mdns = makeMdns(options.socket);
  let failed = false;
  const ready = new Promise<void>((resolve) => {
    mdns.once('ready', () => resolve());
    mdns.once('error', () => resolve());
  });
  mdns.on('error', (error: Error) => {
    if (failed) return;
    failed = true;
    logger.warn(`mDNS: svc is not announced on the network: ${errorMessage(error)}`);
  });
  mdns.on('query', (query: DecodedPacket, rinfo: RemoteInfo) => {
    const legacy = rinfo.port !== MDNS_PORT;
    const answer = answerQuery(query, service, legacy);
    if (!answer) return;
    // A legacy unicast query gets its answer back where it came from; the others the group.
    const reply = (error: Error | null) => error && logger.warn(`mDNS: answer not sent: ${error.message}`);
    if (legacy) mdns.respond(answer, { port: rinfo.port, address: rinfo.address }, reply);
    else mdns.respond(answer, reply);
  });
  if (options.announce !== false) mdns.once('ready', () => mdns.respond(announcement(service)));
  logger.info(`mDNS: announcing ${service.instance} (_whatsnowplaying._tcp) on ${service.addresses.join(', ')} port ${service.port}`);
  return {
    ready,
    close: () => new Promise<void>((resolve) => mdns.destroy(() => resolve())),
  };
}
