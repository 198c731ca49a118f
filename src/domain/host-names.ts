// Host names svc answers to (docs/running.md "Tunnels and public names"): loopback names, and the
// `allowedHosts` entries, each a name or `*.domain` for every name one label under the domain. Pure.

/** Loopback hosts need no secret; anything else is reachable from the network. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

const LABEL = '[a-z0-9_~-]+';
const ALLOWED_HOST_ENTRY = new RegExp(`^(\\*\\.)?${LABEL}(\\.${LABEL})*$`, 'i');

/**
 * An `allowedHosts` entry: a host name (`np.example.net`) or `*.` and a domain
 * (`*.trycloudflare.com`). No other wildcard, no port, no scheme.
 */
export function isAllowedHostEntry(entry: string): boolean {
  return ALLOWED_HOST_ENTRY.test(entry);
}

/**
 * Whether a lower-cased host name matches one of the entries: exactly, or for `*.domain` any
 * name that is one label and the domain (`abc.trycloudflare.com`, not `a.b.trycloudflare.com`,
 * not `trycloudflare.com` itself), as a TLS certificate's wildcard matches (RFC 6125 section 6.4.3).
 */
export function allowedHostMatcher(entries: readonly string[]): (name: string) => boolean {
  const exact = new Set<string>();
  const domains: string[] = [];
  for (const entry of entries.map((item) => item.toLowerCase())) {
    if (entry.startsWith('*.')) domains.push(entry.slice(1));
    else exact.add(entry);
  }
  return (name) => {
    if (exact.has(name)) return true;
    return domains.some((domain) => name.endsWith(domain) && name.length > domain.length && !name.slice(0, -domain.length).includes('.'));
  };
}
