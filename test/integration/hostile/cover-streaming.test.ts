import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { rawRequest } from '../../helpers/raw-http';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { pipelineWithoutReading } from '../../helpers/attackers';
import { PNG_HEAD } from '../../helpers/images';

// GET /cover/<key> goes out in 64 KiB chunks read from the store as the reader takes them
// (docs/decisions.md "Hostile clients and browsers": a streamed HTTP body, within
// limits.maxQueuedBytes). A PNG signature in front of random bytes is an image to the store's
// sniffer; random bytes do not compress, so nothing in between can shrink them.

const bigImage = Buffer.concat([PNG_HEAD, randomBytes(9 * 1024 * 1024)]);
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('streamed cover replies', () => {
  let t: TestServer;
  let key: string;
  beforeAll(async () => {
    t = await startTestServer({ config: { limits: { maxQueuedBytes: 1024 * 1024 } } });
    key = (await t.server.imageStore.put(bigImage)).key;
  });
  afterAll(() => t.close());

  it('When a reader pauses and resumes, then it gets every byte, with the Content-Length and headers of the image', async () => {
    const { hostname, port } = new URL(t.url);
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.write(`GET /cover/${key} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    socket.pause();
    // A first look, then let the reader take the rest.
    await new Promise((resolve) => setImmediate(resolve));
    socket.resume();
    await new Promise((resolve) => socket.on('end', resolve));
    const raw = Buffer.concat(chunks);
    const headerEnd = raw.indexOf('\r\n\r\n');
    const head = raw.subarray(0, headerEnd).toString('latin1');
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head).toContain(`Content-Length: ${bigImage.length}`);
    expect(head).toContain('Content-Type: image/png');
    expect(head).toContain('X-Content-Type-Options: nosniff');
    expect(sha(raw.subarray(headerEnd + 4))).toBe(sha(bigImage));
  });

  it('When ten readers pipeline 8 requests each and stop reading, then a reader that reads still gets the whole image', async () => {
    const stuck = pipelineWithoutReading(t.url, 10, `/cover/${key}`, true);
    const res = await rawRequest(`${t.url}/cover/${key}`);
    expect(res.status).toBe(200);
    await stuck.stop();
  });

  it('When HEAD asks for a cover, then the headers come without a body', async () => {
    const res = await rawRequest(`${t.url}/cover/${key}`, { method: 'HEAD' });
    expect([res.status, res.headers['content-length'], res.text]).toEqual([200, String(bigImage.length), '']);
  });
});
