// Which IP addresses the server may fetch images from (SSRF guard, docs/streams.md "Submitted cover
// URLs"). Pure: parses and classifies an address string, no DNS, no sockets.
//
// Refused unless `coverFetch.allowPrivateAddresses` is set: loopback, private (RFC 1918, CGNAT,
// unique-local, site-local) and link-local. Always refused: unspecified ("this network"),
// multicast, and reserved ranges (documentation, benchmarking, broadcast, 240/4, IETF protocol
// assignments, anything outside IPv6 global unicast 2000::/3). IPv6 forms that embed an IPv4
// address (mapped ::ffff:a.b.c.d, translated ::ffff:0:a.b.c.d, compatible ::a.b.c.d, NAT64
// 64:ff9b::/96, 6to4 2002::/16) are judged by the IPv4 address inside.

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'unspecified' | 'multicast' | 'reserved' | 'invalid';

export interface GuardPolicy {
  allowPrivateAddresses: boolean;
}

/** Classes a LAN setup may opt into; everything else but `public` is never fetched. */
const PRIVATE_CLASSES: ReadonlySet<AddressClass> = new Set(['loopback', 'private', 'link-local']);

export function isAllowedAddress(address: string, policy: GuardPolicy): boolean {
  const kind = classifyAddress(address);
  return kind === 'public' || (policy.allowPrivateAddresses && PRIVATE_CLASSES.has(kind));
}

/** Classifies an IPv4 or IPv6 literal (brackets and an IPv6 zone id are accepted). */
export function classifyAddress(address: string): AddressClass {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const v4 = parseIPv4(bare);
  if (v4 !== null) return classifyIPv4(v4);
  const v6 = parseIPv6(bare);
  return v6 === null ? 'invalid' : classifyIPv6(v6);
}

interface Range4 {
  base: number;
  bits: number;
  kind: AddressClass;
}

const cidr4 = (text: string, kind: AddressClass): Range4 => {
  const [base, bits] = text.split('/');
  return { base: parseIPv4(base ?? '') ?? 0, bits: Number(bits), kind };
};

// IANA IPv4 Special-Purpose Address Registry, the ranges that are not globally reachable.
const IPV4_RANGES: readonly Range4[] = [
  cidr4('0.0.0.0/8', 'unspecified'),
  cidr4('10.0.0.0/8', 'private'),
  cidr4('100.64.0.0/10', 'private'),
  cidr4('127.0.0.0/8', 'loopback'),
  cidr4('169.254.0.0/16', 'link-local'),
  cidr4('172.16.0.0/12', 'private'),
  cidr4('192.0.0.0/24', 'reserved'),
  cidr4('192.0.2.0/24', 'reserved'),
  cidr4('192.88.99.0/24', 'reserved'),
  cidr4('192.168.0.0/16', 'private'),
  cidr4('198.18.0.0/15', 'reserved'),
  cidr4('198.51.100.0/24', 'reserved'),
  cidr4('203.0.113.0/24', 'reserved'),
  cidr4('224.0.0.0/4', 'multicast'),
  cidr4('240.0.0.0/4', 'reserved'),
];

function classifyIPv4(address: number): AddressClass {
  for (const range of IPV4_RANGES) {
    const mask = range.bits === 0 ? 0 : (0xffffffff << (32 - range.bits)) >>> 0;
    if ((address & mask) >>> 0 === range.base) return range.kind;
  }
  return 'public';
}

/** Strict dotted quad: four decimal parts 0-255, no leading zeros (which some parsers read as octal). */
function parseIPv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

/** Eight 16-bit groups, or null. Accepts `::` compression, an IPv4 tail and a `%zone` suffix. */
function parseIPv6(text: string): number[] | null {
  const withoutZone = text.includes('%') ? text.slice(0, text.indexOf('%')) : text;
  if (withoutZone === '' || withoutZone.split('::').length > 2) return null;
  const [headText, tailText] = withoutZone.split('::') as [string, string | undefined];
  const head = parseGroups(headText, tailText === undefined);
  const tail = tailText === undefined ? [] : parseGroups(tailText, true);
  if (head === null || tail === null) return null;
  if (tailText === undefined) return head.length === 8 ? head : null;
  if (head.length + tail.length > 7) return null;
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

function parseGroups(text: string, mayEndInIPv4: boolean): number[] | null {
  if (text === '') return [];
  const parts = text.split(':');
  const groups: number[] = [];
  for (const [index, part] of parts.entries()) {
    if (mayEndInIPv4 && index === parts.length - 1 && part.includes('.')) {
      const v4 = parseIPv4(part);
      if (v4 === null) return null;
      groups.push(v4 >>> 16, v4 & 0xffff);
    } else if (/^[0-9a-f]{1,4}$/i.test(part)) {
      groups.push(parseInt(part, 16));
    } else {
      return null;
    }
  }
  return groups;
}

function classifyIPv6(g: readonly number[]): AddressClass {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = ((g6 << 16) >>> 0) + g7;
  const firstFiveZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;

  if (firstFiveZero && g5 === 0) {
    if (g6 === 0 && g7 === 0) return 'unspecified';
    if (g6 === 0 && g7 === 1) return 'loopback';
    // IPv4-compatible (deprecated, never routed): as bad as the IPv4 address inside, else reserved.
    return nonPublicOr(classifyIPv4(embedded), 'reserved');
  }
  if (firstFiveZero && g5 === 0xffff) return classifyIPv4(embedded); // ::ffff:a.b.c.d (mapped)
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) return classifyIPv4(embedded); // ::ffff:0:a.b.c.d
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyIPv4(embedded); // NAT64 64:ff9b::/96
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'private'; // local-use NAT64 64:ff9b:1::/48
  if (g0 === 0x2002) return nonPublicOr(classifyIPv4(((g1 << 16) >>> 0) + g2), 'public'); // 6to4

  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7 unique local
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // fec0::/10 site-local (deprecated)
  if ((g0 & 0xff00) === 0xff00) return 'multicast'; // ff00::/8
  if ((g0 & 0xe000) !== 0x2000) return 'reserved'; // outside global unicast 2000::/3 (100::/64, 5f00::/16, ...)
  if (g0 === 0x2001 && g1 < 0x0200) return 'reserved'; // 2001::/23 IETF protocol assignments (Teredo, ORCHID, ...)
  if (g0 === 0x2001 && g1 === 0x0db8) return 'reserved'; // 2001:db8::/32 documentation
  if ((g0 & 0xfff0) === 0x3ff0) return 'reserved'; // 3fff::/20 documentation
  return 'public';
}

function nonPublicOr(kind: AddressClass, otherwise: AddressClass): AddressClass {
  return kind === 'public' ? otherwise : kind;
}
