import type { PlayListeners } from '../../../src/domain/play';
import { eventually } from '../../helpers/eventually';
import { postJson, request } from '../../helpers/http';
import { freePort, startIcecast, startSource, type IcecastServer, type IcecastSource } from '../../helpers/icecast';
import { listenerOn, urlAuthMount as urlAuthMountFor } from '../../helpers/icecast-listeners';
import { describeWithPeers } from '../../helpers/peers';
import { waitRealTime } from '../../helpers/real-time';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// Listener sessions from Debian's real icecast2 (docs/play-log.md "Listener sessions"): HTTP
// listeners join and leave while three tracks play; each play's listeners match a count made by
// hand, including a listener who stays connected through the end. Once through URL
// authentication, once through polling /admin/listclients, and the safe set-up with svc down.

const SECRET = 'playlog-secret';
const MOUNT = '/live.mp3';

interface PlayView {
  dbid: number;
  title: string;
  started_at: string;
  ended_at: string | null;
  end_reason: string | null;
  listeners: PlayListeners | null;
}

async function history(t: TestServer): Promise<PlayView[]> {
  return ((await request(`${t.url}/v1/history`)).json as { tracks: PlayView[] }).tracks.reverse();
}

const secondsBetween = (from: number | string, to: number | string) => (Number(new Date(to)) - Number(new Date(from))) / 1000;
const listen = (icecast: IcecastServer) => listenerOn(icecast, MOUNT);
const urlAuthMount = (svcUrl: string, options: { add: boolean }) => urlAuthMountFor(svcUrl, SECRET, MOUNT, options);

/**
 * The scenario both feeds must count: A, then B, then C, ended explicitly. L1 hears A and part of
 * B; L2 part of B and part of C; L3 joins during C and is still there when it ends. A listener
 * joins `joinAfterMs` after a track starts: more than the feed's error on a join time, so each
 * join falls in the track it was meant for.
 */
async function playThreeTracks(t: TestServer, icecast: IcecastServer, openCount: () => Promise<number>, joinAfterMs = 300, overlapMs = 300) {
  const waitOpen = (n: number) => eventually(openCount, (count) => count === n, 20_000);
  const submit = async (title: string) => expect((await postJson(`${t.url}/v1/remoteinput`, { secret: SECRET, artist: 'Band', title })).status).toBe(200);
  const at: Record<string, number> = {};
  await submit('A');
  const l1 = listen(icecast);
  await waitOpen(1);
  at.j1 = Date.now();
  await waitRealTime(overlapMs, 'L1 must hear A for a while: Icecast and svc count listener seconds from real join times');
  await submit('B');
  await waitRealTime(joinAfterMs, 'a join must fall inside the track it is meant for, past the feed error on a join time');
  const l2 = listen(icecast);
  await waitOpen(2);
  at.j2 = Date.now();
  await waitRealTime(overlapMs, 'L1 and L2 must overlap B in real listening');
  await l1.leave();
  at.l1 = Date.now();
  await waitOpen(1);
  await submit('C');
  await waitRealTime(joinAfterMs, 'a join must fall inside the track it is meant for, past the feed error on a join time');
  const l3 = listen(icecast);
  await waitOpen(2);
  at.j3 = Date.now();
  await waitRealTime(overlapMs, 'L2 and L3 must overlap C in real listening');
  await l2.leave();
  at.l2 = Date.now();
  await waitOpen(1);
  await waitRealTime(overlapMs, 'L3 alone must hear some of C before it ends');
  expect((await postJson(`${t.url}/v1/remoteinput/end`, { secret: SECRET, channel: 'main' })).status).toBe(200);
  const plays = await eventually(
    () => history(t),
    (list) => list.length === 3 && list.every((play) => play.listeners !== null),
    20_000,
  );
  await l3.leave();
  return { plays, at };
}

/** The hand count: who overlapped which play, and for how long (listener seconds within `slack` per session). */
function expectHandCount(plays: PlayView[], at: Record<string, number>, slack: number): void {
  const [a, b, c] = plays as [PlayView, PlayView, PlayView];
  expect(plays.map((play) => [play.title, play.end_reason])).toEqual([
    ['A', 'next'],
    ['B', 'next'],
    ['C', 'explicit'],
  ]);
  expect([a.listeners?.atp, a.listeners?.peak]).toEqual([1, 1]);
  expect([b.listeners?.atp, b.listeners?.peak]).toEqual([2, 2]);
  // L3 is still connected when C ends: counted (AzuraCast's query would drop it).
  expect([c.listeners?.atp, c.listeners?.peak]).toEqual([2, 2]);
  const near = (actual: number | undefined, expected: number, sessions: number) => {
    expect(actual).toBeGreaterThanOrEqual(Math.floor(expected - slack * sessions));
    expect(actual).toBeLessThanOrEqual(Math.ceil(expected + slack * sessions));
  };
  near(a.listeners?.listener_seconds, secondsBetween(at.j1 ?? 0, b.started_at), 1);
  near(b.listeners?.listener_seconds, secondsBetween(b.started_at, at.l1 ?? 0) + secondsBetween(at.j2 ?? 0, c.started_at), 2);
  near(c.listeners?.listener_seconds, secondsBetween(c.started_at, at.l2 ?? 0) + secondsBetween(at.j3 ?? 0, c.ended_at ?? 0), 2);
}

describeWithPeers(['icecast2'], 'play log: listener sessions from a real icecast2', () => {
  let t: TestServer | undefined;
  let icecast: IcecastServer | undefined;
  let source: IcecastSource | undefined;
  afterEach(async () => {
    source?.stop();
    await icecast?.close();
    await t?.close();
    source = undefined;
    icecast = undefined;
    t = undefined;
  });

  it('When Icecast authenticates listeners at svc, then each play counts the listeners who heard it, exactly', async () => {
    const port = await freePort();
    t = await startTestServer({
      config: { secret: SECRET, playlog: { icecast: [{ url: `http://127.0.0.1:${port}`, adminUser: 'admin', mounts: { [MOUNT]: 'main' } }] } },
    });
    icecast = await startIcecast({ port, extraConfig: urlAuthMount(t.url, { add: true }) });
    source = await startSource(icecast, MOUNT);
    const server = t.server;
    const open = async () => (await server.plays.openSessions(`http://127.0.0.1:${port}`, MOUNT)).length;
    const { plays, at } = await playThreeTracks(t, icecast, open);
    expectHandCount(plays, at, 1);
    // Every session came from Icecast's own calls, with a hashed address and the player's user agent.
    const sessions = [];
    for await (const page of server.plays.sessionPages({ from: '2000-01-01T00:00:00.000Z', to: '2999-01-01T00:00:00.000Z' })) sessions.push(...page);
    expect(sessions).toHaveLength(3);
    expect(
      sessions.every((session) => session.source === 'auth' && /^[0-9a-f]{64}$/.test(session.address) && session.userAgent === 'playlog-test-listener'),
    ).toBe(true);
  });

  it('When the source on the audience Icecast goes away, then its mount_remove call ends the play on the channel (source_disconnect)', async () => {
    const port = await freePort();
    t = await startTestServer({
      config: { secret: SECRET, playlog: { icecast: [{ url: `http://127.0.0.1:${port}`, adminUser: 'admin', mounts: { [MOUNT]: 'main' } }] } },
    });
    icecast = await startIcecast({ port, extraConfig: urlAuthMount(t.url, { add: true }) });
    source = await startSource(icecast, MOUNT);
    expect((await postJson(`${t.url}/v1/remoteinput`, { secret: SECRET, artist: 'Band', title: 'Live' })).status).toBe(200);
    source.stop();
    const server = t;
    const plays = await eventually(
      () => history(server),
      (list) => list[0]?.end_reason === 'source_disconnect',
      20_000,
    );
    expect(plays[0]).toMatchObject({ title: 'Live', end_reason: 'source_disconnect' });
  });

  it('When svc only polls /admin/listclients, then the counts match within its polling error', async () => {
    icecast = await startIcecast();
    const server = icecast;
    t = await startTestServer({
      config: {
        secret: SECRET,
        playlog: { icecast: [{ url: server.url, adminUser: 'admin', adminPassword: server.adminPassword, poll: 0.25, mounts: { [MOUNT]: 'main' } }] },
      },
    });
    source = await startSource(icecast, MOUNT);
    const plays = t.server.plays;
    const open = async () => (await plays.openSessions(new URL(server.url).origin, MOUNT)).length;
    // A join is back-dated by Icecast's whole `Connected` seconds, so it may land up to a second
    // early: listeners join 1.5 s into a track here (a CI run saw one joining 0.5 s into C counted in B).
    const result = await playThreeTracks(t, icecast, open, 1500);
    // A poll every quarter second (the interval is the config's; a station polls every few seconds):
    // a session's ends are known to within a poll, its join to within Icecast's whole seconds.
    expectHandCount(result.plays, result.at, 2);
  });

  it('When svc is down, then Icecast refuses listeners with listener_add, and admits them with the safe set-up (listener_remove only)', async () => {
    const stopped = `http://127.0.0.1:${await freePort()}`;
    icecast = await startIcecast({ extraConfig: urlAuthMount(stopped, { add: true }) });
    source = await startSource(icecast, MOUNT);
    const refused = listen(icecast);
    // Icecast answers 401 when its auth URL does not answer: the listener is turned away.
    expect(await refused.status).toBe('401');
    source.stop();
    await icecast.close();

    icecast = await startIcecast({ extraConfig: urlAuthMount(stopped, { add: false }) });
    source = await startSource(icecast, MOUNT);
    const admitted = listen(icecast);
    // Admitted: Icecast lists it as a listener of the mount while svc is still down.
    const running = icecast;
    await eventually(
      async () => (await running.sources()).find((entry) => String(entry.listenurl).endsWith(MOUNT))?.listeners,
      (listeners) => listeners === 1,
    );
    await admitted.leave();
  });
});
