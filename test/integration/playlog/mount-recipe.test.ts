import fs from 'node:fs';
import path from 'node:path';
import { until } from '../../helpers/eventually';
import { freePort, startIcecast, startSource, type IcecastServer, type IcecastSource } from '../../helpers/icecast';
import { listenerOn, type Listener } from '../../helpers/icecast-listeners';
import { describeWithPeers } from '../../helpers/peers';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// The safe <mount> block of docs/play-log.md ("URL authentication"), copied as written into a real
// icecast2 (only svc's address and the secret filled in), with svc polling as the doc says: svc
// runs, stops, and starts again, and no listener is ever refused; the listener_remove of a listener
// who joined while svc was down reaches svc once it is back.

const SECRET = 'mount-recipe-secret';
const MOUNT = '/live.mp3';
const ROOT = path.join(__dirname, '..', '..', '..');

/** The first ```xml block after `marker` in docs/play-log.md. */
function xmlAfter(marker: string): string {
  const text = fs.readFileSync(path.join(ROOT, 'docs', 'play-log.md'), 'utf8');
  const start = text.indexOf(marker);
  expect(start).toBeGreaterThan(-1);
  const block = /```xml\n([\s\S]*?)```/.exec(text.slice(start));
  expect(block).not.toBeNull();
  return block?.[1] ?? '';
}

describeWithPeers(['icecast2'], 'the safe <mount> block of docs/play-log.md against a real icecast2', () => {
  let t: TestServer | undefined;
  let icecast: IcecastServer | undefined;
  let source: IcecastSource | undefined;
  const listeners: Listener[] = [];
  afterEach(async () => {
    await Promise.all(listeners.map((listener) => listener.leave()));
    source?.stop();
    await icecast?.close();
    await t?.close();
  });

  const recipe = xmlAfter('### URL authentication');

  it('is the first block, without listener_add, with listener_remove and mount_remove', () => {
    expect(recipe).not.toContain('listener_add');
    expect(recipe).toContain('name="listener_remove"');
    expect(recipe).toContain('name="mount_remove"');
    expect(recipe).toContain(`<mount-name>${MOUNT}</mount-name>`);
  });

  it('When svc runs, stops and starts again, then Icecast admits every listener and listener_remove reaches svc once it is back', async () => {
    const svcPort = await freePort();
    const asWritten = recipe.replaceAll('http://svc.example.org:8899', `http://127.0.0.1:${svcPort}`).replaceAll('YOUR-SECRET', SECRET);
    expect(asWritten).not.toContain('svc.example.org');
    icecast = await startIcecast({ extraConfig: asWritten });
    source = await startSource(icecast, MOUNT);
    const server = icecast;
    const origin = new URL(server.url).origin;
    // Polling as the doc says; an interval of an hour means only its poll at start runs, so a
    // session that closes during the test was closed by Icecast's listener_remove.
    t = await startTestServer({
      config: {
        secret: SECRET,
        port: svcPort,
        playlog: { icecast: [{ url: server.url, adminUser: 'admin', adminPassword: server.adminPassword, poll: 3600, mounts: { [MOUNT]: 'main' } }] },
      },
    });
    const svc = t;
    const sessions = async () => {
      const all = [];
      for await (const page of svc.server.plays.sessionPages({ from: '2000-01-01T00:00:00.000Z', to: '2999-01-01T00:00:00.000Z' })) all.push(...page);
      return all;
    };
    const closed = async () => (await sessions()).filter((session) => session.disconnectedAt !== null).length;
    const listen = () => {
      const listener = listenerOn(server, MOUNT);
      listeners.push(listener);
      return listener;
    };
    const listed = async () => (await server.sources()).find((entry) => String(entry.listenurl).endsWith(MOUNT))?.listeners;

    // svc up: admitted, and its leaving is written.
    const whileUp = listen();
    expect(await whileUp.status).toBe('200');
    await whileUp.leave();
    await until(async () => (await closed()) === 1, "the first listener's listener_remove reached svc");

    // svc down: admitted all the same.
    await svc.stop();
    const whileDown = listen();
    expect(await whileDown.status).toBe('200');
    await until(async () => (await listed()) === 1, 'Icecast lists the listener who joined while svc was down');

    // svc back: its poll at start sees the listener who joined while it was down.
    await svc.restart();
    await until(async () => (await svc.server.plays.openSessions(origin, MOUNT)).length === 1, 'svc, back, has the listener who joined while it was down');
    const afterBack = listen();
    expect(await afterBack.status).toBe('200');
    await until(async () => (await listed()) === 2, 'Icecast lists both listeners');

    await whileDown.leave();
    await until(async () => (await closed()) === 2, 'the listener_remove of the listener who joined while svc was down reached svc');
    await afterBack.leave();
    await until(async () => (await closed()) === 3, "the last listener's listener_remove reached svc");
    const written = await sessions();
    expect(written.map((session) => [session.mount, session.disconnectedAt !== null])).toEqual([
      [MOUNT, true],
      [MOUNT, true],
      [MOUNT, true],
    ]);
  });
});
