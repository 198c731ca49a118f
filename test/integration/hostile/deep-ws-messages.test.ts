import { connectClient } from '../../helpers/ws-client';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// "Any nesting depth in any field ... never a stack overflow" (docs/decisions.md) on the WebSocket
// side too: a request nested as deep as a message may be (64 KiB, MAX_INBOUND_BYTES) gets an
// error frame, and the socket and the server carry on.

describe('/v1/images/ws with deeply nested messages', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('When a request nests 15,000 levels in each of two fields, then an error frame answers and the socket stays usable', async () => {
    const client = await connectClient(t.url, { subscribe: false });
    const deep = `${'['.repeat(15_000)}${']'.repeat(15_000)}`;
    const answer = await client.ask(`{"type":"get_images","artist":${deep},"category":${deep}}`);
    expect(answer.type).toBe('error');
    const hello = await client.ask({ type: 'hello' });
    expect(hello.type).toBe('welcome');
    client.close();
    expect(t.logs.join('\n')).not.toMatch(/RangeError|Maximum call stack/);
  });
});
