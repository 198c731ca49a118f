import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { withinHangGuard } from '../helpers/real-time';
import { startBlackHole } from '../helpers/receiver';
import { startServeProcess } from '../helpers/serve-process';
import { makeTempDir } from '../helpers/temp-dir';

// Round three, N1 (docs/security.md "Nothing outlives its client"): with any output configured,
// `svc serve` was still running 10 minutes after SIGTERM once an `Upgrade` request with a body
// to a path that is no WebSocket held its socket. The real process, a webhook output whose
// target never answers, 20 such sockets held open, then SIGTERM.

test('With an output hanging and 20 upgrade-with-body sockets held open, svc serve exits 0 after SIGTERM, not waiting for them', async () => {
  const temp = makeTempDir('svc-shutdown-');
  const hole = await startBlackHole();
  const config = path.join(temp.dir, 'svc.json');
  fs.writeFileSync(
    config,
    JSON.stringify({ outputs: [{ name: 'hook', type: 'webhook', url: hole.url, secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}` }] }),
  );
  const serve = await startServeProcess(['--port', '0', '--db', path.join(temp.dir, 'svc.db'), '--offline', '--config', config]);
  const { port } = new URL(serve.url);
  const held: net.Socket[] = [];
  try {
    for (let index = 0; index < 20; index++) {
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write('GET /v1/nothing HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 200000\r\n\r\n');
      socket.write(Buffer.alloc(100_000, 0x61));
      held.push(socket);
    }
    // A track, so that a delivery hangs on the black hole.
    await fetch(`${serve.url}/v1/remoteinput?artist=A&title=Held`);
    serve.child.kill('SIGTERM');
    // The hanging delivery's attempt timeout is 10 s and the held sockets would hold it for ever: an
    // exit inside the guard waited for neither (the exit time itself: bench/shutdown.bench.js).
    expect(await withinHangGuard(serve.exited, 'svc serve exiting after SIGTERM', 8000)).toBe(0);
  } finally {
    for (const socket of held) socket.destroy();
    serve.child.kill('SIGKILL');
    await hole.close();
    temp.cleanup();
  }
});
