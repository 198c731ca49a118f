import dnsPacket, { type Answer, type DecodedPacket } from 'dns-packet';
import { advertisedAddresses, answerQuery, announcement, type AdvertisedService } from '../../../src/server/mdns/answer';

// svc's answer to What's Now Playing's discovery, as a pure function (docs/whats-now-playing.md
// "Found on the network"). What WNP asks and reads, from its source
// (whatsnowplaying/whats-now-playing nowplaying/mdns_discovery.py, notifications/remote.py):
// python-zeroconf's ServiceBrowser asks PTR `_whatsnowplaying._tcp.local.`, then ServiceInfo
// reads the instance's SRV (server, port), TXT (properties) and A records (IPv4 addresses);
// Remote Output connects to the first address and the port. The TXT keys are those of
// processes/webserver.py `_register_mdns_service`: path, version, app.

const service: AdvertisedService = { instance: 'svc on studio', host: 'studio', port: 8899, addresses: ['192.0.2.10'], version: '0.1.0' };

/** A query packet as it goes over the wire, decoded as svc's responder receives it. */
function wireQuery(questions: { name: string; type: 'PTR' | 'SRV' | 'TXT' | 'A' }[], id = 0): DecodedPacket {
  return dnsPacket.decode(dnsPacket.encode({ type: 'query', id, flags: 0, questions }));
}

/** The answer as it goes over the wire, decoded as WNP's zeroconf reads it: every record, answers and additionals. */
function wireRecords(query: DecodedPacket, legacy = false): { packet: DecodedPacket; records: Answer[] } {
  const answer = answerQuery(query, service, legacy);
  if (!answer) throw new Error('no answer');
  const packet = dnsPacket.decode(dnsPacket.encode(answer));
  return { packet, records: [...(packet.answers ?? []), ...(packet.additionals ?? [])] };
}

/** What WNP's DiscoveredService holds: name, host (the SRV target), port, IPv4 addresses, properties. */
function discovered(records: Answer[]): { name: string; host: string; port: number; addresses: string[]; properties: Record<string, string> } {
  const ptr = records.find((record) => record.type === 'PTR' && record.name === '_whatsnowplaying._tcp.local');
  if (!ptr || ptr.type !== 'PTR') throw new Error('no PTR');
  const name = ptr.data;
  const srv = records.find((record) => record.type === 'SRV' && record.name === name);
  const txt = records.find((record) => record.type === 'TXT' && record.name === name);
  if (srv?.type !== 'SRV' || txt?.type !== 'TXT') throw new Error('no SRV or TXT');
  const addresses = records.flatMap((record) => (record.type === 'A' && record.name === srv.data.target ? [record.data] : []));
  const strings = (Array.isArray(txt.data) ? txt.data : [txt.data]).map((entry) => entry.toString());
  const properties = Object.fromEntries(strings.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
  return { name, host: srv.data.target, port: srv.data.port, addresses, properties };
}

describe('mDNS answer to What’s Now Playing’s discovery', () => {
  it('When WNP browses _whatsnowplaying._tcp, then one answer names svc with its host, port, address and the TXT keys WNP announces', () => {
    const { packet, records } = wireRecords(wireQuery([{ name: '_whatsnowplaying._tcp.local', type: 'PTR' }]));
    expect(packet.type).toBe('response');
    expect(packet.flag_aa).toBe(true);
    expect(discovered(records)).toEqual({
      name: 'svc on studio._whatsnowplaying._tcp.local',
      host: 'studio.local',
      port: 8899,
      addresses: ['192.0.2.10'],
      properties: { path: '/', version: '0.1.0', app: 'WhatsNowPlaying', server: 'svc' },
    });
  });

  it('When zeroconf asks the instance’s SRV and TXT, or the host’s A, then each is answered; another service type or host is not', () => {
    const instance = 'svc on studio._whatsnowplaying._tcp.local';
    const { records } = wireRecords(
      wireQuery([
        { name: instance, type: 'SRV' },
        { name: instance, type: 'TXT' },
      ]),
    );
    expect(records.map((record) => record.type).sort()).toEqual(['A', 'SRV', 'TXT']);
    expect(wireRecords(wireQuery([{ name: 'STUDIO.local', type: 'A' }])).records).toEqual([expect.objectContaining({ type: 'A', data: '192.0.2.10' })]);
    expect(answerQuery(wireQuery([{ name: '_http._tcp.local', type: 'PTR' }]), service)).toBeNull();
    expect(answerQuery(wireQuery([{ name: 'other.local', type: 'A' }]), service)).toBeNull();
    // A response is never answered (only queries are).
    expect(answerQuery(dnsPacket.decode(dnsPacket.encode(announcement(service))), service)).toBeNull();
  });

  it('When the query comes from another port than 5353 (legacy unicast), then the answer repeats its id and question with short TTLs', () => {
    const { packet } = wireRecords(wireQuery([{ name: '_whatsnowplaying._tcp.local', type: 'PTR' }], 4242), true);
    expect(packet.id).toBe(4242);
    expect(packet.questions).toEqual([expect.objectContaining({ name: '_whatsnowplaying._tcp.local', type: 'PTR' })]);
    for (const record of [...(packet.answers ?? []), ...(packet.additionals ?? [])]) if (record.type !== 'OPT') expect(record.ttl).toBeLessThanOrEqual(10);
  });

  it('When svc listens on loopback, then nothing is announced; on every address, the non-loopback IPv4 ones, as WNP', () => {
    const interfaces = {
      lo: [{ family: 'IPv4', address: '127.0.0.1', internal: true }],
      eth0: [
        { family: 'IPv4', address: '192.0.2.10', internal: false },
        { family: 'IPv6', address: '2001:db8::1', internal: false },
      ],
      wlan0: [{ family: 'IPv4', address: '198.51.100.7', internal: false }],
    };
    expect(advertisedAddresses('127.0.0.1', interfaces)).toEqual([]);
    expect(advertisedAddresses('localhost', interfaces)).toEqual([]);
    expect(advertisedAddresses('0.0.0.0', interfaces)).toEqual(['192.0.2.10', '198.51.100.7']);
    expect(advertisedAddresses('198.51.100.7', interfaces)).toEqual(['198.51.100.7']);
    expect(answerQuery(wireQuery([{ name: '_whatsnowplaying._tcp.local', type: 'PTR' }]), { ...service, addresses: [] })).toBeNull();
  });
});
