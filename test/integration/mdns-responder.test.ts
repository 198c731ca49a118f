import dgram from 'node:dgram';
import dnsPacket, { type DecodedPacket } from 'dns-packet';
import { advertiseOverMdns } from '../../src/server/mdns/advertise';

// The mDNS responder (docs/whats-now-playing.md "Found on the network") through the multicast-dns
// library, on loopback only: bound to 127.0.0.1 on a port of its own, multicast off and no
// announcement, so nothing is sent to a multicast group. A query from another port than 5353 is a
// legacy unicast one (RFC 6762 section 6.7) and is answered to its sender.

/** A UDP port free on 127.0.0.1 now. */
async function freePort(): Promise<number> {
  const probe = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => probe.bind(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('mDNS responder on loopback', () => {
  it('When WNP’s discovery query reaches it, then it answers with svc’s port and TXT records; a query it does not serve gets nothing before the next answer', async () => {
    const port = await freePort();
    const logs: string[] = [];
    const logger = {
      info: (line: string) => logs.push(line),
      warn: (line: string) => logs.push(line),
      error: (line: string) => logs.push(line),
      debug: () => undefined,
    };
    const advertiser = advertiseOverMdns({
      service: { instance: 'svc on test', host: 'test', port: 8899, addresses: ['192.0.2.10'], version: '0.1.0' },
      logger,
      socket: { multicast: false, bind: '127.0.0.1', interface: '127.0.0.1', ip: '127.0.0.1', port },
      announce: false,
    });
    const client = dgram.createSocket('udp4');
    const answers: DecodedPacket[] = [];
    const waiters: (() => void)[] = [];
    client.on('message', (message) => {
      answers.push(dnsPacket.decode(message));
      waiters.shift()?.();
    });
    await new Promise<void>((resolve) => client.bind(0, '127.0.0.1', () => resolve()));
    const ask = (id: number, name: string) => {
      const answered = new Promise<void>((resolve) => waiters.push(resolve));
      client.send(dnsPacket.encode({ type: 'query', id, questions: [{ name, type: 'PTR' }] }), port, '127.0.0.1');
      return answered;
    };
    try {
      await advertiser.ready;
      await ask(1, '_whatsnowplaying._tcp.local');
      // A type svc does not serve, then WNP's again: only the second is answered.
      client.send(dnsPacket.encode({ type: 'query', id: 2, questions: [{ name: '_http._tcp.local', type: 'PTR' }] }), port, '127.0.0.1');
      await ask(3, '_whatsnowplaying._tcp.local');
      const ids = answers.map((answer) => answer.id);
      expect(ids.every((id) => id === 1 || id === 3)).toBe(true);
      const last = answers.at(-1);
      expect(last?.id).toBe(3);
      const records = [...(last?.answers ?? []), ...(last?.additionals ?? [])];
      expect(records).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: 'PTR', data: 'svc on test._whatsnowplaying._tcp.local' }),
          expect.objectContaining({ type: 'SRV', data: expect.objectContaining({ port: 8899, target: 'test.local' }) }),
          expect.objectContaining({ type: 'A', data: '192.0.2.10' }),
        ]),
      );
      const txt = records.find((record) => record.type === 'TXT');
      expect(txt?.type === 'TXT' && (txt.data as Buffer[]).map(String)).toEqual(['path=/', 'version=0.1.0', 'app=WhatsNowPlaying', 'server=svc']);
    } finally {
      client.close();
      await advertiser.close();
    }
  });
});
