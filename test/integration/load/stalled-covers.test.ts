import { postJson } from '../../helpers/http';
import { serveBytes, startImageHost, type Handler, type ImageHost } from '../../helpers/image-host';
import { makePng } from '../../helpers/images';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// Stalled cover downloads (docs/limits-and-load.md "Cover downloads"): four submissions whose
// covers crawl (a PNG signature, then one byte a second) must not hold the four download slots
// for the next submission. Either they are on one host, which gets at most half the slots, or
// on four hosts, and a download that crawls while others wait gives its slot up within about a second.

const cover = makePng(24, 24, [200, 30, 30], [30, 30, 200]);

/** Answers 200 with the first bytes of a PNG, then one byte a second, never finishing. */
const crawl: Handler = (_request, response) => {
  response.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': String(cover.length * 100) });
  response.write(cover.subarray(0, 16));
  const timer = setInterval(() => response.write(Buffer.from([0])), 1000);
  response.on('close', () => clearInterval(timer));
};

describe('stalled cover downloads', () => {
  let server: TestServer;
  const hosts: ImageHost[] = [];
  beforeAll(async () => {
    server = await startTestServer({ config: { coverFetch: { allowPrivateAddresses: true } } });
  });
  afterAll(async () => {
    await server?.close();
    await Promise.all(hosts.map((host) => host.close()));
  });

  async function stallThenSubmit(stalledHosts: ImageHost[], label: string): Promise<{ coverurl: unknown }> {
    const fast = await startImageHost('127.0.0.1');
    hosts.push(fast);
    fast.route('/cover.png', serveBytes(cover, 'image/png'));
    const stalled = stalledHosts.map((host, index) =>
      postJson(`${server.url}/v1/remoteinput`, { artist: 'Slow', title: `${label} ${index}`, coverurl: `${host.url}/slow-${label}-${index}.png` }),
    );
    // All four are downloading (each host has seen its request) before the fifth comes.
    const deadline = Date.now() + 5000;
    while (stalledHosts.reduce((sum, host) => sum + host.requests.filter((path) => path.includes(label)).length, 0) < 4 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Had it waited for a download slot, the crawls (cut off only below) would have held it past the
    // processing budget and it would be stored without its cover: the cover is the outcome.
    const answer = await postJson(`${server.url}/v1/remoteinput`, { artist: 'Fast', title: `after ${label}`, coverurl: `${fast.url}/cover.png` });
    expect(answer.status).toBe(200);
    // The crawlers are cut off: their submissions end without a cover.
    await Promise.all([...new Set(stalledHosts)].map((host) => host.close()));
    await Promise.allSettled(stalled);
    return { coverurl: (answer.json as { processed_metadata?: { coverurl?: unknown } }).processed_metadata?.coverurl };
  }

  it('When four covers crawl on four hosts, then a fifth submission gets its cover', async () => {
    const slow = await Promise.all(['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'].map((address) => startImageHost(address)));
    hosts.push(...slow);
    for (const [index, host] of slow.entries()) host.route(`/slow-four-${index}.png`, crawl);
    const { coverurl } = await stallThenSubmit(slow, 'four');
    expect(coverurl).toEqual(expect.stringMatching(/^cover\//));
  });

  it('When four covers crawl on one host, then that host holds at most half the slots and a fifth submission is not held up', async () => {
    const slow = await startImageHost('127.0.0.6');
    hosts.push(slow);
    for (let index = 0; index < 4; index += 1) slow.route(`/slow-one-${index}.png`, crawl);
    const { coverurl } = await stallThenSubmit([slow, slow, slow, slow], 'one');
    expect(coverurl).toEqual(expect.stringMatching(/^cover\//));
  });
});
