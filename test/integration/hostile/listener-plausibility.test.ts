import type { PlayListeners } from '../../../src/domain/play';
import type { ListenerSession } from '../../../src/store/plays';
import { eventually, until } from '../../helpers/eventually';
import { postJson, request } from '../../helpers/http';
import { rawRequest } from '../../helpers/raw-http';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// Listener sessions must be plausible (docs/play-log.md "Sessions that must be plausible"). Each
// attack of the hostile round, made with the write secret against a real server: forged
// listener_add calls past the open-session cap, a listener_remove with duration=1e9, a
// listener_remove claiming a start before svc saw the mount live, a replayed listener_remove, a
// remove for a mount svc never saw live, and a listener who reconnects inside a play.

const SECRET = 'plausible-secret-54';
const MOUNT = '/live.mp3';
const ICECAST = 'http://127.0.0.1:8000';

interface PlayView {
  dbid: number;
  title: string;
  listeners: PlayListeners | null;
}

async function start(playlog: Record<string, unknown> = {}): Promise<TestServer> {
  return startTestServer({ config: { secret: SECRET, playlog: { icecast: [{ url: ICECAST, adminUser: 'admin', mounts: { [MOUNT]: 'main' } }], ...playlog } } });
}

async function callback(t: TestServer, fields: Record<string, string>): Promise<{ action: string; recorded: boolean }> {
  const form = new URLSearchParams({ server: '127.0.0.1', port: '8000', mount: MOUNT, agent: 'player', ...fields }).toString();
  const answer = await rawRequest(`${t.url}/v1/icecast/listeners`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`icecast:${SECRET}`).toString('base64')}` },
    body: form,
  });
  expect([answer.status, answer.headers['icecast-auth-user']]).toEqual([200, '1']);
  return JSON.parse(answer.text) as { action: string; recorded: boolean };
}

const add = (t: TestServer, client: string, ip = `192.0.2.${Number(client) % 250}`) => callback(t, { action: 'listener_add', client, ip });
const remove = (t: TestServer, client: string, duration: string, ip = '192.0.2.9') => callback(t, { action: 'listener_remove', client, ip, duration });

async function history(t: TestServer): Promise<PlayView[]> {
  return ((await request(`${t.url}/v1/history`)).json as { tracks: PlayView[] }).tracks.reverse();
}

async function sessions(t: TestServer): Promise<ListenerSession[]> {
  const all: ListenerSession[] = [];
  for await (const page of t.server.plays.sessionPages({ from: '2000-01-01T00:00:00.000Z', to: '2999-01-01T00:00:00.000Z' })) all.push(...page);
  return all;
}

const submit = async (t: TestServer, title: string) =>
  expect((await postJson(`${t.url}/v1/remoteinput`, { secret: SECRET, artist: 'Band', title })).status).toBe(200);
const endPlay = async (t: TestServer) => expect((await postJson(`${t.url}/v1/remoteinput/end`, { secret: SECRET, channel: 'main' })).status).toBe(200);
const counted = (t: TestServer, n: number) =>
  eventually(
    () => history(t),
    (plays) => plays.length === n && plays.every((play) => play.listeners !== null),
  );

describe('listener sessions must be plausible (hostile inputs, H3/M1)', () => {
  let t: TestServer | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('When forged listener_add calls go past the open-session cap of the mount, then the sessions stop at the cap, the rest are refused and logged', async () => {
    const server = (t = await start({ maxOpenSessionsPerMount: 40 }));
    await submit(server, 'A');
    const answers = [];
    for (let client = 1; client <= 120; client += 1) answers.push(await add(server, String(client)));
    expect(answers.filter((answer) => answer.recorded)).toHaveLength(40);
    expect(await server.server.plays.openSessions(ICECAST, MOUNT)).toHaveLength(40);
    await endPlay(server);
    const [played] = await counted(server, 1);
    expect(played?.listeners).toMatchObject({ atp: 40, peak: 40 });
    expect(server.logs.some((line) => line.includes('40 listener sessions open (playlog.maxOpenSessionsPerMount)'))).toBe(true);
  });

  it('When a listener_remove claims duration=1e9, or longer than sessionMaxHours, then nothing is recorded and no past play gains a listener', async () => {
    const server = (t = await start());
    await submit(server, 'A');
    await endPlay(server);
    await counted(server, 1);
    await callback(server, { action: 'mount_add' });
    expect(await remove(server, '5', '1000000000')).toMatchObject({ recorded: false });
    expect(await remove(server, '6', String(25 * 3600))).toMatchObject({ recorded: false });
    expect(await sessions(server)).toEqual([]);
    expect((await history(server))[0]?.listeners).toEqual({ atp: 0, listener_seconds: 0, peak: 0 });
    expect(server.logs.some((line) => line.includes('listener_remove not recorded (a duration longer than playlog.sessionMaxHours)'))).toBe(true);
  });

  it('When a listener_remove claims a start before svc saw the mount live, then its session starts when the mount went live, and earlier plays keep their count', async () => {
    const server = (t = await start());
    await submit(server, 'A');
    await endPlay(server);
    await counted(server, 1);
    const live = await callback(server, { action: 'mount_add' });
    expect(live).toEqual({ action: 'mount_add', recorded: true });
    const mount = await server.server.plays.mountLive(ICECAST, MOUNT);
    await submit(server, 'B');
    // An hour claimed: A ended before the mount went live, so only B is counted again.
    expect(await remove(server, '7', '3600')).toEqual({ action: 'listener_remove', recorded: true });
    const [session] = await sessions(server);
    expect(session?.connectedAt).toBe(mount?.liveSince);
    await endPlay(server);
    const [a, b] = await counted(server, 2);
    expect(a?.listeners?.atp).toBe(0);
    expect(b?.listeners?.atp).toBe(1);
  });

  it('When the same listener_remove arrives again (a replay), then it is recorded once', async () => {
    const server = (t = await start());
    await callback(server, { action: 'mount_add' });
    await submit(server, 'A');
    expect(await remove(server, '8', '1')).toMatchObject({ recorded: true });
    expect(await remove(server, '8', '1')).toMatchObject({ recorded: false });
    expect(await remove(server, '8', '2')).toMatchObject({ recorded: false });
    expect(await sessions(server)).toHaveLength(1);
    expect(server.logs.some((line) => line.includes('this session was recorded already: a replay'))).toBe(true);
  });

  it('When a listener_remove arrives for a mount svc never saw live, then nothing is recorded, and the log says how to give svc that sign', async () => {
    const server = (t = await start());
    expect(await remove(server, '9', '30')).toMatchObject({ recorded: false });
    expect(await sessions(server)).toEqual([]);
    expect(server.logs.some((line) => line.includes('svc has seen no sign that the mount is live: poll it, or add mount_add'))).toBe(true);
  });

  it('When a client id is not a number, as Icecast never sends, then the call records nothing', async () => {
    const server = (t = await start());
    expect(await callback(server, { action: 'listener_add', client: 'forged-1', ip: '192.0.2.1' })).toMatchObject({ recorded: false });
    expect(await sessions(server)).toEqual([]);
  });

  it('When a listener reconnects inside a play, then the play counts one listener (ATP counts listeners, not sessions)', async () => {
    const server = (t = await start());
    await submit(server, 'A');
    await add(server, '10', '198.51.100.7');
    await remove(server, '10', '1', '198.51.100.7');
    await add(server, '11', '198.51.100.7');
    await add(server, '12', '198.51.100.8');
    await until(async () => (await server.server.plays.openSessions(ICECAST, MOUNT)).length === 2);
    await endPlay(server);
    const [played] = await counted(server, 1);
    expect(played?.listeners).toMatchObject({ atp: 2 });
  });

  it('When svc starts with an Icecast server that is not polled, then it warns that URL authentication alone leaves dead sessions open', async () => {
    const server = (t = await start());
    expect(server.logs.some((line) => line.includes(`playlog.icecast ${ICECAST}: not polled`))).toBe(true);
  });
});
