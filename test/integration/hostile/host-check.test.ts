import { rawRequest } from '../../helpers/raw-http';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { storedCount } from '../../helpers/stored-count';

// DNS rebinding (docs/decisions.md): evil.test re-resolves to 127.0.0.1 and its page talks to svc with
// `Host: evil.test`. A loopback listener answers only loopback names and `allowedHosts`.

describe('the Host check on a loopback listener', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { allowedHosts: ['dj-laptop.local'] } });
  });
  afterAll(() => t.close());

  it.each(['/v1/last', '/v1/status', '/v1/remoteinput?artist=A', '/cover/abc', '/'])(
    'When Host is a foreign name on %s, then 421 names the host',
    async (path) => {
      const res = await rawRequest(`${t.url}${path}`, { headers: { Host: 'evil.test:8899' } });
      expect(res.status).toBe(421);
      expect(JSON.parse(res.text)).toEqual({ error: 'Unknown host: evil.test:8899 (to answer to this name, add "evil.test" to allowedHosts in the config)' });
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(await storedCount(t.server.tracks)).toBe(0);
    },
  );

  it.each(['localhost', 'LOCALHOST:8899', '127.0.0.1', '127.1.2.3:80', '[::1]:8899', 'dj-laptop.local', 'DJ-Laptop.local:8899'])(
    'When Host is %s, then the request is answered',
    async (host) => {
      const res = await rawRequest(`${t.url}/v1/last`, { headers: { Host: host } });
      expect(res.status).toBe(200);
    },
  );

  // Round three: loose parsing took the part before the first colon, so `localhost:evil.example` was 200.
  it.each(['localhost:evil.example', 'localhost:80:81', '127.0.0.1:', 'localhost evil.example', '127.0.0.1@evil.example', '[::1]evil'])(
    'When Host is the malformed %s, then 421',
    async (host) => {
      for (const path of ['/v1/last', '/v1/status']) expect((await rawRequest(`${t.url}${path}`, { headers: { Host: host } })).status).toBe(421);
    },
  );

  it('When a WebSocket upgrade names a foreign host, then 421 and no upgrade', async () => {
    await expect(upgradeStatus(t.url, 'evil.test')).resolves.toBe(421);
  });
});

describe('the Host check on a LAN listener', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { host: '0.0.0.0', secret: 's', mdns: { advertise: false } } });
  });
  afterAll(() => t.close());

  it('When listening on all addresses, then any Host is answered (the LAN uses names and addresses svc cannot know)', async () => {
    const { port } = new URL(t.url);
    const res = await rawRequest(`http://127.0.0.1:${port}/v1/status`, { headers: { Host: 'dj-laptop.fritz.box' } });
    expect(res.status).toBe(200);
  });
});

/** The status of a refused handshake (an accepted one never answers a plain response: the test times out). */
async function upgradeStatus(httpUrl: string, host: string): Promise<number> {
  const res = await rawRequest(`${httpUrl}/v1/images/ws`, {
    headers: { Host: host, Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13' },
  });
  return res.status;
}
