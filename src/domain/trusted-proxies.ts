import { isIP } from 'node:net';

// Who the client really is behind a reverse proxy (docs/running.md "Behind a proxy"): the
// `trustProxy` list names the proxies whose `X-Forwarded-For` / `Forwarded` svc believes; the
// client is then the right-most address of that chain that is not a trusted proxy (the left part
// of the chain is whatever the client sent, so only what trusted proxies appended counts).
// Nothing is trusted by default. Pure: no sockets, no lookups.

/** One address or a CIDR block, as bits of the 128-bit IPv6 space (IPv4 mapped into ::ffff:0:0/96). */
interface Block {
  network: bigint;
  prefix: number;
}

/** True when `address` (as a socket reports it) is one of the trusted proxies. */
export type ProxyMatcher = (address: string) => boolean;

const IPV4_MAPPED = 0xffffn << 32n;

/** The address as a 128-bit number (IPv4 as ::ffff:a.b.c.d); undefined when it is not an IP address. */
export function addressBits(address: string): bigint | undefined {
  const text = address.trim().toLowerCase();
  const zoneless = text.includes('%') ? text.slice(0, text.indexOf('%')) : text;
  const kind = isIP(zoneless);
  if (kind === 4) return IPV4_MAPPED | ipv4Bits(zoneless);
  if (kind !== 6) return undefined;
  return ipv6Bits(zoneless);
}

function ipv4Bits(text: string): bigint {
  return text.split('.').reduce((bits, part) => (bits << 8n) | BigInt(Number(part)), 0n);
}

function ipv6Bits(text: string): bigint {
  // A trailing dotted IPv4 part (::ffff:1.2.3.4) stands for the last two groups.
  const lastColon = text.lastIndexOf(':');
  const dotted = text.slice(lastColon + 1);
  const hex = dotted.includes('.')
    ? `${text.slice(0, lastColon + 1)}${(ipv4Bits(dotted) >> 16n).toString(16)}:${(ipv4Bits(dotted) & 0xffffn).toString(16)}`
    : text;
  const [head = '', tail] = hex.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((group) => BigInt(parseInt(group, 16))));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<bigint>(8 - left.length - right.length).fill(0n), ...right];
  return all.reduce((bits, group) => (bits << 16n) | group, 0n);
}

/** Parses `1.2.3.4`, `10.0.0.0/8`, `::1`, `fd00::/8`; throws an Error naming the entry when it is neither. */
export function parseBlock(entry: string): Block {
  const [address = '', prefixText, extra] = entry.trim().split('/');
  const bits = addressBits(address);
  const isV4 = isIP(address.trim()) === 4;
  const width = isV4 ? 32 : 128;
  const prefix = prefixText === undefined ? width : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (bits === undefined || extra !== undefined || !(prefix >= 0 && prefix <= width)) {
    throw new Error(`not an IP address or CIDR block: "${entry}"`);
  }
  const prefix128 = isV4 ? prefix + 96 : prefix;
  return { network: bits & mask(prefix128), prefix: prefix128 };
}

function mask(prefix: number): bigint {
  return prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(128 - prefix);
}

/** The matcher of a `trustProxy` list (an empty list trusts nothing). Throws on an entry that is not an address or CIDR. */
export function trustedProxies(entries: readonly string[]): ProxyMatcher {
  const blocks = entries.map(parseBlock);
  if (blocks.length === 0) return () => false;
  return (address) => {
    const bits = addressBits(address);
    return bits !== undefined && blocks.some((block) => (bits & mask(block.prefix)) === block.network);
  };
}

/** The `for=` addresses of a `Forwarded` header (RFC 7239), in order: quotes, brackets and ports removed. */
export function forwardedFor(header: string): string[] {
  const found: string[] = [];
  for (const element of header.split(',')) {
    for (const pair of element.split(';')) {
      const equals = pair.indexOf('=');
      if (equals < 0 || pair.slice(0, equals).trim().toLowerCase() !== 'for') continue;
      found.push(
        nodeAddress(
          pair
            .slice(equals + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1'),
        ),
      );
    }
  }
  return found;
}

/** `[2001:db8::1]:4711` → `2001:db8::1`, `192.0.2.1:80` → `192.0.2.1`; anything else as it is. */
function nodeAddress(node: string): string {
  if (node.startsWith('[')) return node.slice(1, node.indexOf(']') < 0 ? undefined : node.indexOf(']'));
  const colon = node.indexOf(':');
  return colon > 0 && node.indexOf(':', colon + 1) < 0 ? node.slice(0, colon) : node;
}

export interface ForwardingHeaders {
  xForwardedFor?: string | string[] | undefined;
  forwarded?: string | string[] | undefined;
}

/** Longest client "address" kept from a header: a proxy always writes an IP; anything longer is noise. */
const MAX_ADDRESS_LENGTH = 64;

/**
 * The real client address of a request from `peer` (the socket's address). Only a trusted peer's
 * headers are read: `X-Forwarded-For` when present (what nginx, HAProxy and Caddy set), else
 * `Forwarded`. The chain is walked from the right past trusted proxies; the first address that is
 * not one is the client. A chain of trusted proxies only gives its left-most address.
 */
export function clientAddress(peer: string, headers: ForwardingHeaders, trusted: ProxyMatcher): string {
  if (!trusted(peer)) return peer;
  const chain = forwardingChain(headers);
  for (let index = chain.length - 1; index >= 0; index -= 1) {
    const hop = chain[index];
    if (hop === '') continue;
    // A hop that is not an IP address was not written by a proxy (docs/security.md: a rotating made-up
    // X-Forwarded-For was a fresh failure budget per request): the client is the peer itself.
    if (!trusted(hop) || index === 0) return addressBits(hop) === undefined ? peer : hop.slice(0, MAX_ADDRESS_LENGTH);
  }
  return peer;
}

function forwardingChain(headers: ForwardingHeaders): string[] {
  const join = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(',') : value);
  const xff = join(headers.xForwardedFor);
  if (xff !== undefined && xff.trim() !== '') return xff.split(',').map((hop) => hop.trim());
  const forwarded = join(headers.forwarded);
  return forwarded === undefined ? [] : forwardedFor(forwarded);
}
