import net from 'node:net';
import { eventually } from '../../helpers/eventually';
import { rawRequest } from '../../helpers/raw-http';
import { withinHangGuard } from '../../helpers/real-time';
import { startBlackHole } from '../../helpers/receiver';
import { startTestServer } from '../../helpers/test-server';

// Round three, N1 (docs/security.md "Nothing outlives its client"): an `Upgrade: websocket`
// request with a body of about 100 KB to a path that is no WebSocket left its socket open after
// the client had gone, counted against the caps: 10,500 of them from 21 addresses locked every
// fresh address out, and with an output configured SIGTERM no longer exited. Scaled down: an
// address allowed 3 connections sends 6 such requests and goes away after each.

const UPGRADE_WITH_BODY = (bytes: number) =>
  `GET /v1/nothing HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: ${bytes}\r\n\r\n`;

/** Sends the upgrade with its body from `localAddress`; resolves with the status line once answered (the socket stays open unless `leave`). */
function upgradeWithBody(port: number, localAddress: string, leave: boolean): Promise<{ status: string; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress });
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      socket.write(UPGRADE_WITH_BODY(120_000));
      socket.write(Buffer.alloc(120_000, 0x61));
    });
    socket.once('data', (chunk: Buffer) => {
      if (leave) socket.destroy();
      resolve({ status: chunk.toString('latin1').split('\r\n')[0] ?? '', socket });
    });
    socket.once('close', () => reject(new Error('closed before an answer')));
  });
}

describe('an Upgrade request with a body', () => {
  it('When an address allowed 3 connections sends 6 of them and leaves after each answer, then each is answered 404 and the address still gets /v1/status', async () => {
    const t = await startTestServer({ config: { limits: { maxConnections: 50, maxConnectionsPerAddress: 3 } } });
    try {
      const port = Number(new URL(t.url).port);
      for (let round = 0; round < 6; round++) {
        const { status } = await upgradeWithBody(port, '127.0.0.3', true);
        expect(status).toBe('HTTP/1.1 404 Not Found');
      }
      const probe = await eventually(
        () => rawRequest(`${t.url}/v1/status`, { localAddress: '127.0.0.3' }).catch(() => ({ status: 0 })),
        (answer) => answer.status === 200,
        5000,
      );
      expect(probe.status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('When such a client keeps its socket open and an output is configured, then the shutdown still ends within 2.5 s', async () => {
    const hole = await startBlackHole();
    const t = await startTestServer({
      config: { outputs: [{ name: 'hook', type: 'webhook', url: hole.url, secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}` }] } as never,
      outputPollMs: 20,
    });
    const port = Number(new URL(t.url).port);
    const held = await upgradeWithBody(port, '127.0.0.4', false);
    // A delivery in flight to a target that never answers.
    await rawRequest(`${t.url}/v1/remoteinput?artist=A&title=Held`);
    await eventually(
      () => Promise.resolve(hole.accepted()),
      (count) => count > 0,
    );
    // The delivery's own attempt timeout is 10 s: closing within the guard shows the shutdown waited
    // for neither the held upgrade nor the hanging delivery (the shutdown time itself: bench/shutdown.bench.js).
    await withinHangGuard(t.close(), 'closing with a held upgrade and a delivery in flight', 8000);
    held.socket.destroy();
    await hole.close();
  });
});
