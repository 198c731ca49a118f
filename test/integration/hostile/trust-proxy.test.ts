import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import { trustedProxies } from '../../../src/domain/trusted-proxies';
import { createApp } from '../../../src/server/app';
import type { AppState } from '../../../src/server/context';
import { corsPolicy } from '../../../src/server/middleware/cors';
import { createWorkPool } from '../../../src/server/guards/work-pool';
import { silentLogger } from '../../helpers/silent-logger';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/running.md "Behind a proxy": `trustProxy` names the proxies whose X-Forwarded-For is
// believed. Unset, a forged header changes nothing: every rule keyed on the client address sees
// the socket's. Set, the fair queue of expensive answers (server/guards/work-pool.ts, the one history
// pages and SSE replays share) treats each real client on its own.

interface Probe {
  url: string;
  /** Releases the one running job. */
  release(): void;
  /** Resolves once `count` requests have reached the pool routes. */
  arrived(count: number): Promise<void>;
  close(): Promise<void>;
}

/** The real Koa chain with a route that waits in a fair pool (one slot, one waiting job per client), keyed on ctx.ip. */
async function startProbe(trustProxy: readonly string[]): Promise<Probe> {
  const pool = createWorkPool({ concurrency: 1, maxQueued: 10, maxQueuedPerClient: 1, floodRefusalDelayMs: 0 });
  let release = () => undefined as void;
  let arrivals = 0;
  const router = new Router<AppState>();
  router.use(async (_ctx, next) => {
    arrivals += 1;
    await next();
  });
  router.get('/hold', async (ctx) => {
    await pool.run(ctx.ip, () => new Promise<void>((resolve) => (release = resolve)));
    ctx.body = { ip: ctx.ip };
  });
  router.get('/queued', async (ctx) => {
    await pool.run(ctx.ip, async () => undefined);
    ctx.body = { ip: ctx.ip };
  });
  router.get('/ip', (ctx) => {
    ctx.body = { ip: ctx.ip };
  });
  const app = createApp({ logger: silentLogger, cors: corsPolicy(['*']), routers: [router], trustedProxy: trustedProxies(trustProxy) });
  const handle = app.callback();
  const server = http.createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    release: () => release(),
    async arrived(count) {
      while (arrivals < count) await new Promise((resolve) => setTimeout(resolve, 5));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const get = (url: string, forwardedFor: string) =>
  fetch(url, { headers: { 'X-Forwarded-For': forwardedFor } }).then(async (answer) => ({
    status: answer.status,
    body: (await answer.json()) as { ip?: string },
  }));

describe('trustProxy and the per-client rules', () => {
  it('When trustProxy is unset, then a forged X-Forwarded-For changes nothing: the address is the socket, and two "clients" share one queue', async () => {
    const probe = await startProbe([]);
    try {
      expect((await get(`${probe.url}/ip`, '198.51.100.7')).body.ip).toMatch(/127\.0\.0\.1$/);
      const holding = get(`${probe.url}/hold`, '198.51.100.1');
      await probe.arrived(2);
      const first = get(`${probe.url}/queued`, '198.51.100.2');
      await probe.arrived(3);
      // Same socket address: its one waiting place is taken.
      expect((await get(`${probe.url}/queued`, '198.51.100.3')).status).toBe(503);
      probe.release();
      expect((await first).status).toBe(200);
      expect((await holding).status).toBe(200);
    } finally {
      await probe.close();
    }
  });

  it('When the proxy is trusted, then each real client has its own place in the queue and its own address', async () => {
    const probe = await startProbe(['127.0.0.1']);
    try {
      expect((await get(`${probe.url}/ip`, '6.6.6.6, 198.51.100.7')).body.ip).toBe('198.51.100.7');
      const holding = get(`${probe.url}/hold`, '198.51.100.1');
      await probe.arrived(2);
      const first = get(`${probe.url}/queued`, '198.51.100.2');
      await probe.arrived(3);
      const second = get(`${probe.url}/queued`, '198.51.100.3');
      await probe.arrived(4);
      // 198.51.100.2 again: its own place is taken, and only its.
      expect((await get(`${probe.url}/queued`, '198.51.100.2')).status).toBe(503);
      probe.release();
      expect([(await first).status, (await second).status, (await holding).status]).toEqual([200, 200, 200]);
      expect((await second).body.ip).toBe('198.51.100.3');
    } finally {
      await probe.close();
    }
  });
});

describe('trustProxy and the per-address connection cap', () => {
  let t: TestServer | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  /** Opens `count` connections from 127.0.0.1 at once; answers how many the server closed right away. */
  async function closedAtOnce(url: string, count: number): Promise<number> {
    const { port } = new URL(url);
    const sockets = await Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<{ socket: net.Socket; answered: Promise<boolean> }>((resolve) => {
            const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () => {
              socket.write('GET /v1/status HTTP/1.1\r\nHost: localhost\r\n\r\n');
              const answered = new Promise<boolean>((done) => {
                socket.once('data', () => done(true));
                socket.once('close', () => done(false));
              });
              resolve({ socket, answered });
            });
            socket.on('error', () => undefined);
          }),
      ),
    );
    const answers = await Promise.all(sockets.map((one) => one.answered));
    for (const one of sockets) one.socket.destroy();
    return answers.filter((answered) => !answered).length;
  }

  it('When the connections come from an untrusted address, then the cap applies to it', async () => {
    t = await startTestServer({ config: { limits: { maxConnectionsPerAddress: 3 } } });
    expect(await closedAtOnce(t.url, 5)).toBe(2);
  });

  it('When they come from a trusted proxy, then the cap does not apply to the proxy (it carries every client)', async () => {
    t = await startTestServer({ config: { limits: { maxConnectionsPerAddress: 3 }, trustProxy: ['127.0.0.1'] } });
    expect(await closedAtOnce(t.url, 5)).toBe(0);
  });
});
