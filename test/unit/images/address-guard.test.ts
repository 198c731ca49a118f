import { classifyAddress, isAllowedAddress, type AddressClass } from '../../../src/images/address-guard';

// The SSRF guard as a pure function: every range docs/streams.md "Submitted cover URLs" names, both families, every
// IPv6 form that embeds an IPv4 address. No address here is ever contacted.

const cases: Record<Exclude<AddressClass, 'public'>, string[]> = {
  loopback: [
    '127.0.0.1',
    '127.255.255.254',
    '127.1.2.3',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
    '[::ffff:127.0.0.1]',
    '::ffff:7f00:1',
    '::ffff:0:127.0.0.1',
    '64:ff9b::127.0.0.1',
    '2002:7f00:1::1',
  ],
  private: [
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '192.168.255.255',
    '100.64.0.1',
    '100.127.255.255',
    'fc00::1',
    'fd12:3456:789a::1',
    'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    'fec0::1',
    '::ffff:10.1.2.3',
    '::ffff:192.168.1.1',
    '::ffff:172.16.5.4',
    '::ffff:c0a8:101',
    '64:ff9b::10.0.0.1',
    '64:ff9b::c0a8:1',
    '64:ff9b:1::1',
    '2002:c0a8:0101::1',
    '::10.0.0.1',
  ],
  'link-local': ['169.254.0.1', '169.254.169.254', 'fe80::1', 'fe80::1%eth0', 'febf:ffff::1', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe'],
  unspecified: ['0.0.0.0', '0.1.2.3', '::', '0:0:0:0:0:0:0:0', '::ffff:0.0.0.0'],
  multicast: ['224.0.0.1', '239.255.255.250', 'ff02::1', 'ff05::1:3', 'ff0e::101', '::ffff:224.0.0.251'],
  reserved: [
    '240.0.0.1',
    '255.255.255.255',
    '192.0.0.8',
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9',
    '198.18.0.1',
    '198.19.255.255',
    '192.88.99.1',
    '2001:db8::1',
    '2001::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '100::1',
    '3fff::1',
    '5f00::1',
    '4000::1',
    '::8.8.8.8',
    '::ffff:192.0.2.1',
  ],
  invalid: [
    '',
    'localhost',
    'example.com',
    '1.2.3',
    '1.2.3.4.5',
    '256.1.1.1',
    '01.2.3.4',
    '1.2.3.-4',
    '0x7f.0.0.1',
    '2130706433',
    '::1::',
    '1:2:3:4:5:6:7:8:9',
    'gggg::1',
    '1::2::3',
    ':1::',
    '12345::',
    '::ffff:1.2.3.256',
    '[::1',
  ],
};

describe('classifyAddress', () => {
  for (const [kind, addresses] of Object.entries(cases)) {
    it(`When the address is ${kind}, then it is classified ${kind}`, () => {
      for (const address of addresses) expect([address, classifyAddress(address)]).toEqual([address, kind]);
    });
  }

  it('When the address is globally routable, then it is public', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '172.15.255.255',
      '172.32.0.0',
      '192.167.255.255',
      '100.63.255.255',
      '100.128.0.0',
      '169.253.255.255',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '2a00:1450:4001:80b::200e',
      '::ffff:8.8.8.8',
      '64:ff9b::8.8.8.8',
      '2002:0808:0808::1',
      '2001:200::1',
    ]) {
      expect([address, classifyAddress(address)]).toEqual([address, 'public']);
    }
  });
});

describe('isAllowedAddress', () => {
  it('When private addresses are not allowed, then only public ones pass', () => {
    const policy = { allowPrivateAddresses: false };
    expect(isAllowedAddress('8.8.8.8', policy)).toBe(true);
    for (const list of Object.values(cases)) for (const address of list) expect([address, isAllowedAddress(address, policy)]).toEqual([address, false]);
  });

  it('When private addresses are allowed, then LAN and loopback pass but multicast, unspecified and reserved never do', () => {
    const policy = { allowPrivateAddresses: true };
    for (const address of [...cases.loopback, ...cases.private, ...cases['link-local']])
      expect([address, isAllowedAddress(address, policy)]).toEqual([address, true]);
    for (const address of [...cases.multicast, ...cases.unspecified, ...cases.reserved, ...cases.invalid])
      expect([address, isAllowedAddress(address, policy)]).toEqual([address, false]);
  });
});

describe('classifyAddress: IPv6 written in its shorter forms', () => {
  it('When an address is compressed or carries an IPv4 tail or a zone, then it is read as eight groups', () => {
    for (const address of ['::', '1::', '1:2:3:4:5:6:7::', '::ffff:1.2.3.4', 'FE80::ABCD%wlan0', '1:2:3:4:5:6:1.2.3.4'])
      expect([address, classifyAddress(address)]).not.toEqual([address, 'invalid']);
    // The IPv4 tail lands in the last two groups: a mapped address is its IPv4 address.
    expect(classifyAddress('::ffff:1.2.3.4')).toBe('public');
    expect(classifyAddress('::ffff:127.0.0.1')).toBe('loopback');
    expect(classifyAddress('FE80::ABCD%wlan0')).toBe('link-local');
  });

  it('When an IPv4 tail is not last or groups are too many, then it is not an address', () => {
    for (const address of ['1.2.3.4::1', '1:2:3:4:5:6:7:1.2.3.4', '1:2:3:4:5:6:7:8::'])
      expect([address, classifyAddress(address)]).toEqual([address, 'invalid']);
  });
});
