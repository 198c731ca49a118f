import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { unusedPort } from '../../cli/cli-process';
import { startNginxFront, type NginxFront } from '../../helpers/nginx';
import { postJson } from '../../helpers/http';
import { describeWithPeers } from '../../helpers/peers';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { makeTempDir } from '../../helpers/temp-dir';

// The nginx example (examples/nginx/nginx.conf; docs/limits-and-load.md "Idempotency and
// retries"): an instance that dies after it has read a POST (as kill -9 after storing does) is
// stood in for by a backend that reads the whole request, then drops the connection. A POST with
// an Idempotency-Key goes on to the next instance; one without is answered 502, never sent twice.

interface Dropper {
  address: string;
  /** The Idempotency-Key of each request it dropped ('' for none). */
  keys: string[];
  close(): Promise<void>;
}

async function startDropper(): Promise<Dropper> {
  const keys: string[] = [];
  const server = net.createServer((socket) => {
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (head.length - end - 4 < length) return;
      keys.push(/idempotency-key:\s*(\S+)/i.exec(head)?.[1] ?? '');
      socket.destroy();
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`, keys, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

describeWithPeers(['nginx'], 'the nginx example and a POST whose instance dies under it', () => {
  let temp: ReturnType<typeof makeTempDir>;
  let droppers: Dropper[];
  let server: TestServer;
  let front: NginxFront;

  beforeAll(async () => {
    temp = makeTempDir();
    droppers = [await startDropper(), await startDropper()];
    server = await startTestServer();
    fs.mkdirSync(path.join(temp.dir, 'nginx'));
    front = startNginxFront(path.join(temp.dir, 'nginx'), await unusedPort(), [...droppers.map((one) => one.address), new URL(server.url).host]);
    // Ready once it accepts connections; an HTTP request now would already use up the rotation.
    const { port } = new URL(front.url);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && !(await accepts(Number(port)))) await new Promise((resolve) => setTimeout(resolve, 50));
  });
  afterAll(async () => {
    await front?.stop();
    await server?.close();
    await Promise.all((droppers ?? []).map((one) => one.close()));
    temp?.cleanup();
  });

  it('When the instance drops a POST without a key, then nginx answers 502; with a key, the next instance answers it', async () => {
    const dropped = () => droppers.reduce((count, one) => count + one.keys.length, 0);
    /** Sends until one request reaches a dropping backend (round robin: within three); answers its status and all sent. */
    const untilDropped = async (send: (index: number) => Promise<number>) => {
      const statuses: number[] = [];
      for (let index = 0; index < 3; index++) {
        const before = dropped();
        statuses.push(await send(index));
        if (dropped() > before) return { droppedStatus: statuses.at(-1), statuses };
      }
      return { droppedStatus: undefined, statuses };
    };
    const bare = await untilDropped(async (index) => (await postJson(`${front.url}/v1/remoteinput`, { artist: 'Front', title: `bare ${index}` })).status);
    expect(bare.droppedStatus).toBe(502);
    const keyed = await untilDropped(
      async (index) =>
        (await postJson(`${front.url}/v1/remoteinput`, { artist: 'Front', title: `keyed ${index}` }, { 'Idempotency-Key': `nginx-keyed-${index}` })).status,
    );
    expect(keyed.droppedStatus).toBe(200);
    expect(keyed.statuses.every((status) => status === 200)).toBe(true);
    expect(droppers.flatMap((one) => one.keys).filter((key) => key !== '')).toHaveLength(1);
    const history = (await (await fetch(`${server.url}/v1/history`)).json()) as { tracks: { title: string }[] };
    const keyedTitles = history.tracks.map((track) => track.title).filter((title) => title.startsWith('keyed'));
    expect(keyedTitles.sort()).toEqual(keyed.statuses.map((_, index) => `keyed ${index}`));
  });
});
