import type { Answer, DecodedPacket, Packet, Question } from 'dns-packet';

// The mDNS answer that lets What's Now Playing's clients find svc (docs/whats-now-playing.md
// "Found on the network"). Pure: a decoded query in, the response packet (or null) out.
//
// What the clients look for, from What's Now Playing's own source:
// - nowplaying/processes/webserver.py `_register_mdns_service`: WNP's web server registers the
//   service type `_whatsnowplaying._tcp.local.` (instance `WhatsNowPlaying`), its IPv4 addresses
//   that are not loopback, its port, the server `<hostname>.local.` and the TXT properties
//   `path=/`, `version=<version>` and `app=WhatsNowPlaying`;
// - nowplaying/mdns_discovery.py and nowplaying/notifications/remote.py: the Remote Output
//   plugin browses that type, reads each instance's server, port, IPv4 addresses and properties,
//   and connects to the first address (the server name when there is none) and the port.
// A browser asks PTR for the type, then SRV, TXT and A (python-zeroconf's ServiceInfo); the
// answer to the PTR carries the others as additionals, so one round trip is enough.

export const WNP_SERVICE_TYPE = '_whatsnowplaying._tcp.local';
/** DNS-SD's meta-query: which service types are on the network (RFC 6763 section 9). */
const SERVICES_META = '_services._dns-sd._udp.local';
/** RFC 6762 section 10: 120 s for records naming a host, 75 minutes for the others. */
const HOST_TTL = 120;
const OTHER_TTL = 4500;
/** RFC 6762 section 6.7: a legacy unicast answer's TTLs are at most 10 s. */
const LEGACY_TTL = 10;
/** RFC 6762 section 6.7: a query from another port than 5353 is a legacy unicast one. */
export const MDNS_PORT = 5353;

/** A response: a packet with its answers. */
export type ResponsePacket = Packet & { answers: Answer[] };

export interface AdvertisedService {
  /** The instance label, e.g. `svc on studio` (unique on the network). */
  instance: string;
  /** The host label, without `.local`. */
  host: string;
  port: number;
  /** IPv4 addresses to announce (never loopback, as WNP). */
  addresses: readonly string[];
  version: string;
}

/** `<instance>._whatsnowplaying._tcp.local`, with dots in the label escaped away (a label may not hold one). */
export function instanceName(service: AdvertisedService): string {
  return `${service.instance.replace(/\./g, '-')}.${WNP_SERVICE_TYPE}`;
}

/** `<host>.local`, the host label reduced to what a DNS label holds. */
export function hostName(service: AdvertisedService): string {
  const label = service.host.replace(/[^A-Za-z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || 'svc';
  return `${label.slice(0, 63)}.local`;
}

/** The TXT properties WNP's own server announces, with svc's version. */
export function txtProperties(service: AdvertisedService): string[] {
  return ['path=/', `version=${service.version}`, 'app=WhatsNowPlaying', 'server=svc'];
}

/** Every record of the service, by name and type. */
export function serviceRecords(service: AdvertisedService): { ptr: Answer; srv: Answer; txt: Answer; a: Answer[]; meta: Answer } {
  const instance = instanceName(service);
  const host = hostName(service);
  return {
    ptr: { name: WNP_SERVICE_TYPE, type: 'PTR', ttl: OTHER_TTL, data: instance },
    srv: { name: instance, type: 'SRV', ttl: HOST_TTL, flush: true, data: { port: service.port, target: host, priority: 0, weight: 0 } },
    txt: { name: instance, type: 'TXT', ttl: OTHER_TTL, flush: true, data: txtProperties(service) },
    a: service.addresses.map((address) => ({ name: host, type: 'A', ttl: HOST_TTL, flush: true, data: address })),
    meta: { name: SERVICES_META, type: 'PTR', ttl: OTHER_TTL, data: WNP_SERVICE_TYPE },
  };
}

/**
 * The response to `query`, or null when it asks nothing svc answers for. `legacyUnicast` (the
 * querier's port is not 5353) repeats the id and the questions, as RFC 6762 section 6.7 asks.
 */
export function answerQuery(query: DecodedPacket, service: AdvertisedService, legacyUnicast = false): ResponsePacket | null {
  if (query.type !== 'query' || service.addresses.length === 0) return null;
  const records = serviceRecords(service);
  const answers: Answer[] = [];
  const additionals: Answer[] = [];
  const add = (list: Answer[], ...more: Answer[]) => {
    for (const record of more) if (!answers.includes(record) && !list.includes(record)) list.push(record);
  };
  for (const question of query.questions ?? []) {
    const name = question.name.toLowerCase().replace(/\.$/, '');
    if (name === WNP_SERVICE_TYPE && asks(question, 'PTR')) {
      add(answers, records.ptr);
      add(additionals, records.srv, records.txt, ...records.a);
    } else if (name === SERVICES_META && asks(question, 'PTR')) {
      add(answers, records.meta);
    } else if (name === instanceName(service).toLowerCase()) {
      if (asks(question, 'SRV')) add(answers, records.srv);
      if (asks(question, 'TXT')) add(answers, records.txt);
      add(additionals, ...records.a);
    } else if (name === hostName(service).toLowerCase() && asks(question, 'A')) {
      add(answers, ...records.a);
    }
  }
  if (answers.length === 0) return null;
  const kept = additionals.filter((record) => !answers.includes(record));
  // A legacy unicast answer is an ordinary DNS answer: no cache-flush bit, short TTLs (section 6.7).
  const forLegacy = (record: Answer): Answer => ({ ...record, flush: false, ttl: LEGACY_TTL }) as Answer;
  return {
    type: 'response',
    id: legacyUnicast ? (query.id ?? 0) : 0,
    flags: 0x400,
    ...(legacyUnicast ? { questions: query.questions ?? [] } : {}),
    answers: legacyUnicast ? answers.map(forLegacy) : answers,
    additionals: legacyUnicast ? kept.map(forLegacy) : kept,
  };
}

/** The unsolicited announcement of every record (RFC 6762 section 8.3), sent when svc starts. */
export function announcement(service: AdvertisedService): ResponsePacket {
  const records = serviceRecords(service);
  return { type: 'response', id: 0, flags: 0x400, answers: [records.ptr, records.srv, records.txt, ...records.a] };
}

function asks(question: Question, type: 'PTR' | 'SRV' | 'TXT' | 'A'): boolean {
  return question.type === type || question.type === ('ANY' as Question['type']);
}

/** The non-loopback IPv4 addresses to announce for a listening address (WNP announces the same kind). */
export function advertisedAddresses(
  listenHost: string,
  interfaces: Readonly<Record<string, readonly { family: string | number; address: string; internal: boolean }[] | undefined>>,
): string[] {
  if (isLoopback(listenHost)) return [];
  const all = Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((entry) => (entry.family === 'IPv4' || entry.family === 4) && !entry.internal && !isLoopback(entry.address))
    .map((entry) => entry.address);
  if (listenHost === '0.0.0.0' || listenHost === '::' || listenHost === '') return [...new Set(all)];
  return all.includes(listenHost) ? [listenHost] : [];
}

/** Loopback: what only this machine reaches, so there is nothing to announce. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
