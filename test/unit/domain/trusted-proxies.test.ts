import { addressBits, clientAddress, forwardedFor, parseBlock, trustedProxies } from '../../../src/domain/trusted-proxies';

// docs/running.md "Behind a proxy": which proxies are believed, and who the client then is.

describe('trustProxy matcher (a CIDR matcher as a pure function)', () => {
  it('When nothing is listed, then no address is trusted', () => {
    const trusted = trustedProxies([]);
    expect(trusted('127.0.0.1')).toBe(false);
    expect(trusted('::1')).toBe(false);
  });

  it('When IPv4 addresses and blocks are listed, then members match and neighbours do not, in either socket spelling', () => {
    const trusted = trustedProxies(['10.0.0.0/8', '192.168.1.7', '172.16.0.0/12']);
    expect(trusted('10.255.3.4')).toBe(true);
    expect(trusted('::ffff:10.1.2.3')).toBe(true);
    expect(trusted('11.0.0.1')).toBe(false);
    expect(trusted('192.168.1.7')).toBe(true);
    expect(trusted('192.168.1.8')).toBe(false);
    expect(trusted('172.31.255.255')).toBe(true);
    expect(trusted('172.32.0.0')).toBe(false);
    expect(trusted('not an address')).toBe(false);
  });

  it('When IPv6 blocks are listed, then compressed and full spellings match alike', () => {
    const trusted = trustedProxies(['fd00::/8', '::1', '2001:db8:0:0::/64']);
    expect(trusted('fd12:3456::1')).toBe(true);
    expect(trusted('fe80::1')).toBe(false);
    expect(trusted('0:0:0:0:0:0:0:1')).toBe(true);
    expect(trusted('2001:db8::ffff:1')).toBe(true);
    expect(trusted('2001:db8:0:1::1')).toBe(false);
  });

  it('When /0 is listed, then every address of that family is trusted', () => {
    expect(trustedProxies(['0.0.0.0/0'])('203.0.113.9')).toBe(true);
    expect(trustedProxies(['0.0.0.0/0'])('2001:db8::1')).toBe(false);
    expect(trustedProxies(['::/0'])('2001:db8::1')).toBe(true);
  });

  it('When an entry is neither an address nor a CIDR block, then it is refused by name', () => {
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x', '']) {
      expect(() => parseBlock(bad)).toThrow(`"${bad}"`);
    }
  });

  it('When IPv4-mapped and plain IPv4 spellings name one address, then they have the same bits', () => {
    expect(addressBits('::ffff:127.0.0.1')).toBe(addressBits('127.0.0.1'));
    expect(addressBits('::ffff:7f00:1')).toBe(addressBits('127.0.0.1'));
  });
});

describe('clientAddress: the right-most untrusted address', () => {
  const trusted = trustedProxies(['127.0.0.1', '10.0.0.0/8']);

  it('When the peer is not a trusted proxy, then its forged headers change nothing', () => {
    expect(clientAddress('203.0.113.5', { xForwardedFor: '1.2.3.4' }, trusted)).toBe('203.0.113.5');
    expect(clientAddress('203.0.113.5', { forwarded: 'for=1.2.3.4' }, trustedProxies([]))).toBe('203.0.113.5');
  });

  it('When a trusted proxy appended the client, then the client is that address, whatever the client put in front', () => {
    // nginx's $proxy_add_x_forwarded_for keeps what the client sent and appends the real peer.
    expect(clientAddress('127.0.0.1', { xForwardedFor: '6.6.6.6, 198.51.100.7' }, trusted)).toBe('198.51.100.7');
  });

  it('When several trusted proxies are chained, then they are all walked past', () => {
    expect(clientAddress('127.0.0.1', { xForwardedFor: '198.51.100.7, 10.1.1.1, 10.2.2.2' }, trusted)).toBe('198.51.100.7');
    expect(clientAddress('::ffff:127.0.0.1', { xForwardedFor: ['198.51.100.7', '10.1.1.1'] }, trusted)).toBe('198.51.100.7');
  });

  it('When the whole chain is trusted, then the left-most address is the client', () => {
    expect(clientAddress('127.0.0.1', { xForwardedFor: '10.9.9.9, 10.1.1.1' }, trusted)).toBe('10.9.9.9');
  });

  it('When a trusted proxy sent no header, then the proxy itself is the client', () => {
    expect(clientAddress('127.0.0.1', {}, trusted)).toBe('127.0.0.1');
  });

  it('When only Forwarded is sent, then its for= nodes are read, with ports, brackets and quotes removed', () => {
    expect(forwardedFor('for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"')).toEqual(['192.0.2.60', '2001:db8:cafe::17']);
    expect(clientAddress('127.0.0.1', { forwarded: 'for="198.51.100.7:3000", for=10.0.0.2' }, trusted)).toBe('198.51.100.7');
  });

  it('When both headers are sent, then X-Forwarded-For decides (a client cannot forge its way past with Forwarded)', () => {
    expect(clientAddress('127.0.0.1', { xForwardedFor: '198.51.100.7', forwarded: 'for=1.2.3.4' }, trusted)).toBe('198.51.100.7');
  });
});
