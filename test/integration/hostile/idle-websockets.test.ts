import WebSocket from 'ws';
import { rawRequest } from '../../helpers/raw-http';
import { startTestServer } from '../../helpers/test-server';

// Round three, "still from before" (docs/security.md "Nothing outlives its client"): 10,000 idle WebSockets
// from 42 addresses locked every fresh address out (0 of 40 status probes). Scaled down: a cap of
// 24 connections filled by idle /v1/images/ws sockets from 3 addresses; fresh addresses probe.

function openIdleSocket(url: string, localAddress: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${url.replace('http', 'ws')}/v1/images/ws`, { localAddress });
    socket.on('error', () => undefined);
    socket.once('open', () => resolve(socket));
    socket.once('close', () => reject(new Error('closed before it opened')));
  });
}

describe('idle WebSockets at the connection cap', () => {
  it('When idle WebSockets from 3 addresses fill the cap, then 10 probes from fresh addresses all get /v1/status and /v1/last', async () => {
    const t = await startTestServer({ config: { limits: { maxConnections: 24, maxConnectionsPerAddress: 12 } } });
    const sockets: WebSocket[] = [];
    try {
      for (const address of ['127.0.1.1', '127.0.1.2', '127.0.1.3']) {
        for (let i = 0; i < 8; i += 1) sockets.push(await openIdleSocket(t.url, address));
      }
      const answers: number[] = [];
      for (let probe = 0; probe < 10; probe += 1) {
        const localAddress = `127.0.2.${probe + 1}`;
        answers.push((await rawRequest(`${t.url}/v1/status`, { localAddress })).status);
        answers.push((await rawRequest(`${t.url}/v1/last`, { localAddress })).status);
      }
      expect(answers).toEqual(Array(20).fill(200));
      // The attackers lost sockets; the cap held.
      expect(sockets.filter((socket) => socket.readyState === WebSocket.OPEN).length).toBeLessThan(24);
    } finally {
      for (const socket of sockets) socket.terminate();
      await t.close();
    }
  });
});
