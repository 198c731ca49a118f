import net from 'node:net';
import { unusedPort } from '../../cli/cli-process';
import { until } from '../../helpers/eventually';
import { startNginxFront, type NginxFront } from '../../helpers/nginx';
import { describeWithPeers } from '../../helpers/peers';
import { rawRequest } from '../../helpers/raw-http';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// Icecast's URL-auth callbacks through the example nginx (examples/nginx/nginx.conf, only the ports
// changed) when an instance dies while it holds one (issue 50 item 4): the call goes to the next
// instance, so Icecast gets 200 with icecast-auth-user and admits the listener, and svc records each
// listener once (docs/play-log.md "Sessions that must be plausible"). The dying instance is a TCP
// server that reads a whole request and then drops the connection unanswered, as a killed svc does.

const SECRET = 'callbacks-behind-nginx';
const MOUNT = '/live.mp3';
const LISTENERS = 6;

interface DyingInstance {
  address: string;
  /** The listener callbacks it took (and never answered). */
  requests: () => number;
  close: () => Promise<void>;
}

/** Reads each request's head and drops the connection without an answer. */
async function dyingInstance(): Promise<DyingInstance> {
  let seen = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let head = '';
    socket.on('data', (chunk) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      if (head.startsWith('POST /v1/icecast/listeners ')) seen += 1;
      socket.destroy();
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    requests: () => seen,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Whether a TCP connection to `url`'s port opens. */
function accepts(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

describeWithPeers(['nginx'], 'Icecast listener callbacks through nginx when an instance dies', () => {
  jest.setTimeout(60_000);
  let dying: DyingInstance;
  let svc: TestServer;
  let front: NginxFront;
  let temp: ReturnType<typeof makeTempDir>;

  beforeAll(async () => {
    dying = await dyingInstance();
    svc = await startTestServer({
      config: {
        secret: SECRET,
        trustProxy: ['127.0.0.1'],
        playlog: { icecast: [{ url: 'http://127.0.0.1:8000', adminUser: 'admin', mounts: { [MOUNT]: 'main' } }] },
      },
    });
    temp = makeTempDir();
    // The dying instance first: nginx's first pick, as a killed instance is until nginx takes it out.
    front = startNginxFront(temp.dir, await unusedPort(), [dying.address, new URL(svc.url).host]);
    // Listening, and no request sent yet: one through nginx could meet the dying instance first and
    // take it out of the upstream before the callbacks come.
    await until(() => accepts(new URL(front.url)), 'nginx listens');
  });
  afterAll(async () => {
    await front?.stop();
    await svc?.close();
    await dying?.close();
    temp?.cleanup();
  });

  const callback = (fields: Record<string, string>) =>
    rawRequest(`${front.url}/v1/icecast/listeners`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`icecast:${SECRET}`).toString('base64')}` },
      body: new URLSearchParams({ server: '127.0.0.1', port: '8000', mount: MOUNT, agent: 'player', ...fields }).toString(),
    });

  it(`When the instance holding a listener_add dies, then nginx sends it to the next one: all ${LISTENERS} listeners are admitted and each is recorded once`, async () => {
    expect((await callback({ action: 'mount_add' })).status).toBe(200);
    const answers = [];
    for (let client = 1; client <= LISTENERS; client += 1) {
      answers.push(await callback({ action: 'listener_add', client: String(client), ip: `192.0.2.${client}` }));
    }
    // The case happened: the dying instance took at least one call and answered none.
    expect(dying.requests()).toBeGreaterThanOrEqual(1);
    expect(answers.map((answer) => [answer.status, answer.headers['icecast-auth-user']])).toEqual(answers.map(() => [200, '1']));

    const open = [];
    for await (const page of svc.server.plays.sessionPages({ from: '2000-01-01T00:00:00.000Z', to: '2999-01-01T00:00:00.000Z' })) open.push(...page);
    expect(open.map((session) => session.clientId).sort()).toEqual(Array.from({ length: LISTENERS }, (_, index) => String(index + 1)).sort());
  });
});
