import http from 'node:http';
import { until } from '../../helpers/eventually';
import { freePort, startIcecast, startSource, type IcecastServer, type IcecastSource } from '../../helpers/icecast';
import { listenerOn, urlAuthMount, type Listener } from '../../helpers/icecast-listeners';
import { describeWithPeers } from '../../helpers/peers';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// M1 of the hostile round: a real icecast2 with URL authentication (listener_add and
// listener_remove, no polling) is killed and started again. The killed one never sends its
// listener_remove calls, so its listeners' sessions stayed open for good and every later play
// counted them. Icecast numbers its clients from 0 again after a restart and asks listener_add
// in client order per mount (docs/play-log.md "Sessions that must be plausible"): the first new
// listener with a lower id closes the earlier run's sessions.

const SECRET = 'icecast-restart-secret';
const MOUNT = '/live.mp3';

/** One plain request on a fresh connection: Icecast gives every connection the next client id. */
function spendClientId(icecast: IcecastServer): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get(`${icecast.url}/status-json.xsl`, { agent: false, headers: { Connection: 'close' } }, (response) => {
        response.resume();
        response.on('end', resolve);
      })
      .on('error', reject);
  });
}

describeWithPeers(['icecast2'], 'play log: a real icecast2 killed and restarted under URL authentication', () => {
  let t: TestServer | undefined;
  let icecast: IcecastServer | undefined;
  let source: IcecastSource | undefined;
  const listeners: Listener[] = [];
  afterEach(async () => {
    await Promise.all(listeners.splice(0).map((listener) => listener.leave()));
    source?.stop();
    await icecast?.close();
    await t?.close();
  });

  it('When Icecast is killed and starts again, then the sessions of its earlier run are closed and only the real listeners stay open', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    t = await startTestServer({ config: { secret: SECRET, playlog: { icecast: [{ url: origin, adminUser: 'admin', mounts: { [MOUNT]: 'main' } }] } } });
    const plays = t.server.plays;
    const openIds = async () => (await plays.openSessions(origin, MOUNT)).map((session) => Number(session.clientId));
    const start = async () => {
      icecast = await startIcecast({ port, extraConfig: urlAuthMount(t?.url ?? '', SECRET, MOUNT, { add: true }) });
      source = await startSource(icecast, MOUNT);
      return icecast;
    };

    const first = await start();
    // The first run's listeners get higher ids than the second run's will.
    for (let i = 0; i < 10; i += 1) await spendClientId(first);
    for (let i = 1; i <= 3; i += 1) listeners.push(listenerOn(first, MOUNT, `restart-listener/${i}`));
    await until(async () => (await openIds()).length === 3, 'the first run has three open sessions');
    const ghosts = await openIds();

    await first.crash();
    source?.stop();
    await first.close();
    await Promise.all(listeners.splice(0).map((listener) => listener.leave()));

    const second = await start();
    for (let i = 4; i <= 5; i += 1) listeners.push(listenerOn(second, MOUNT, `restart-listener/${i}`));
    await until(async () => {
      const ids = await openIds();
      return ids.length === 2 && ids.every((id) => !ghosts.includes(id));
    }, 'only the second run’s two listeners are open');
    expect(Math.min(...ghosts)).toBeGreaterThan(Math.max(...(await openIds())));
    expect(t.logs.some((line) => line.includes(`icecast ${origin}${MOUNT}: restarted (client ids start again); 3 session(s) of its earlier run closed`))).toBe(
      true,
    );
  });
});
