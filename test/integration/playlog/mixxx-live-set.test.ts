import type { PlayJson } from '../../../src/domain/play';
import { encodeVorbis, makeTone } from '../../helpers/audio-files';
import { eventually } from '../../helpers/eventually';
import { request } from '../../helpers/http';
import { freePort, startIcecast, type IcecastServer } from '../../helpers/icecast';
import { listenerOn, urlAuthMount, type Listener } from '../../helpers/icecast-listeners';
import { startIcecastTestServer, type IcecastTestServer } from '../../helpers/icecast-source';
import { startMixxx, type Mixxx } from '../../helpers/mixxx';
import { describeWithPeers } from '../../helpers/peers';
import { waitRealTime } from '../../helpers/real-time';
import { runCli } from '../../helpers/run-cli';
import { makeTempDir } from '../../helpers/temp-dir';

// The play log's "done when" (docs/play-log.md): a station connects its Icecast, a live DJ plays
// from Mixxx through svc, and afterwards every play shows its air times, its kind and the
// listeners who heard it, with nobody refused at the door. Mixxx (Debian's, under Xvfb) streams
// to two servers at once, as a station runs it: svc's Icecast source listener, which takes the
// titles, and the audience's real icecast2, which asks svc about every listener (URL
// authentication). The DJ plays one track, loads the next into the other deck, plays it, stops
// the first, and goes off air.

const SECRET = 'mixxx-live-set-secret';
const MOUNT = '/live.ogg';

/** A /v1/history entry: the record's names and the play's fields as every surface shows them. */
type Play = PlayJson & { dbid: number; artist: string; title: string };

describeWithPeers(['mixxx', 'xdotool', 'Xvfb', 'icecast2', 'sox', 'oggenc'], 'play log: a live set from Mixxx', () => {
  const music = makeTempDir('svc-mixxx-music-');
  let svc: IcecastTestServer | undefined;
  let icecast: IcecastServer | undefined;
  let mixxx: Mixxx | undefined;
  const listeners: Listener[] = [];
  afterAll(async () => {
    await Promise.all(listeners.map((listener) => listener.leave()));
    await mixxx?.close();
    await icecast?.close();
    await svc?.close();
    music.cleanup();
  });

  const plays = async (): Promise<Play[]> => ((await request(`${svc?.ts.url}/v1/history`)).json as { tracks: Play[] }).tracks.reverse();

  it('When a DJ plays two tracks from Mixxx to svc and the audience Icecast, then each play has its air times, kind and listeners', async () => {
    const first = encodeVorbis(makeTone(music.dir, 'first', 440, 60), { artist: 'Mixxx Artist', title: 'First From Mixxx', album: 'Deck Album' });
    const second = encodeVorbis(makeTone(music.dir, 'second', 660, 60), { artist: 'Mixxx Artist', title: 'Second From Mixxx', album: 'Deck Album' });
    const icecastPort = await freePort();
    svc = await startIcecastTestServer(SECRET, {
      config: { secret: SECRET, playlog: { icecast: [{ url: `http://127.0.0.1:${icecastPort}`, adminUser: 'admin', mounts: { [MOUNT]: MOUNT } }] } },
    });
    icecast = await startIcecast({ port: icecastPort, extraConfig: urlAuthMount(svc.ts.url, SECRET, MOUNT, { add: true }) });
    const audience = icecast;
    mixxx = await startMixxx(
      first,
      [
        { name: 'svc', port: svc.listener.port, mount: MOUNT, password: SECRET },
        { name: 'audience', port: icecastPort, mount: MOUNT, password: audience.sourcePassword },
      ],
      music.dir,
    );
    const dj = mixxx;
    const server = svc.ts.server;
    const openSessions = async () => (await server.plays.openSessions(`http://127.0.0.1:${icecastPort}`, MOUNT)).length;

    // On air: Mixxx connects to both servers.
    await dj.press('ctrl+l');
    await eventually(audience.sources, (sources) => sources.length === 1, 30_000);
    const early = listenerOn(audience, MOUNT);
    listeners.push(early);
    expect(await early.status).toBe('200');

    // The first track; a second listener tunes in during it, and the first leaves.
    await dj.press('l');
    await eventually(plays, (list) => list.length === 1, 30_000);
    await waitRealTime(1000, 'Mixxx streams the first track a while before the second listener tunes in, so the join falls inside it');
    const late = listenerOn(audience, MOUNT);
    listeners.push(late);
    expect(await late.status).toBe('200');
    // svc has both sessions open (Icecast's listener_add calls): both hear the first track.
    await eventually(openSessions, (count) => count === 2, 20_000);
    await waitRealTime(1000, 'both listeners hear the first track for a second while Mixxx streams it');
    await early.leave();
    // The first listener's session is closed before the next track: it heard only the first.
    await eventually(openSessions, (count) => count === 1, 20_000);

    // The next track in deck 1, then the first stopped; the second listener stays to the end.
    await dj.loadDeck1(second);
    await dj.press('d', 'l');
    await eventually(plays, (list) => list.length === 2, 30_000);
    await waitRealTime(1000, 'the second track must be on air, heard by the listener who stayed, for a second before Mixxx goes off air');
    await dj.press('ctrl+l');
    const set = await eventually(
      plays,
      (list) => list.length === 2 && list[1]?.end_reason === 'source_disconnect' && list.every((play) => play.listeners !== null),
      30_000,
    );

    expect(set.map((play) => [play.artist, play.title, play.kind, play.channel, play.end_reason])).toEqual([
      ['Mixxx Artist', 'First From Mixxx', 'music', MOUNT, 'next'],
      ['Mixxx Artist', 'Second From Mixxx', 'music', MOUNT, 'source_disconnect'],
    ]);
    const [one, two] = set as [Play, Play];
    expect(one.ended_at).toBe(two.started_at);
    expect(Date.parse(two.ended_at ?? '')).toBeGreaterThan(Date.parse(two.started_at));
    // Both listeners heard the first track; only the one who stayed heard the second, to its end.
    expect([one.listeners?.atp, one.listeners?.peak]).toEqual([2, 2]);
    expect([two.listeners?.atp, two.listeners?.peak]).toEqual([1, 1]);

    // What the station's manager runs afterwards.
    const history = await runCli(['history', '--json', '--url', svc.ts.url]);
    expect(history.code).toBe(0);
    // One JSON object a line, oldest first.
    const printed = history.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Play);
    const airFields = (play: Play) => [play.dbid, play.started_at, play.ended_at, play.end_reason, play.kind, play.channel, play.listeners];
    expect(printed.map(airFields)).toEqual(set.map(airFields));
  }, 240_000);
});
