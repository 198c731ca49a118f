import path from 'node:path';
import { ListenerSessions } from '../../../src/playlog/listener-sessions';
import { DEFAULT_PLAY_POLICY } from '../../../src/playlog/play-policy';
import { PlayLog } from '../../../src/playlog/play-log';
import { openStore } from '../../../src/store/open-store';
import type { Store } from '../../../src/store/store';
import { eventually } from '../../helpers/eventually';
import { silentLogger } from '../../helpers/silent-logger';
import { makeTempDir } from '../../helpers/temp-dir';

// A listener the feeds learn of late (docs/play-log.md "Listeners per play"): a poll finds one who
// connected minutes ago, after the play they heard was already counted. The play is counted again.

const SERVER = 'http://127.0.0.1:8000';
const MOUNT = '/live.mp3';
const START = Date.parse('2026-11-01T20:00:00.000Z');
const iso = (seconds: number) => new Date(START + seconds * 1000).toISOString();

describe('listeners learnt of late', () => {
  const temp = makeTempDir('svc-late-listeners-');
  let store: Store;
  let playLog: PlayLog;
  let clock = START;
  afterEach(async () => {
    await playLog.close();
    await store.close();
  });

  it('When a poll finds a listener connected before the last play ended, then that play is counted again with them', async () => {
    store = await openStore(path.join(temp.dir, 'late.db'), { maxImageBytes: 1000 });
    const changed: number[] = [];
    playLog = new PlayLog({
      plays: store.plays,
      policy: DEFAULT_PLAY_POLICY,
      logger: silentLogger,
      countsListeners: true,
      complement: false,
      minSessionSeconds: 0,
      onPlaysChanged: async (dbids) => {
        changed.push(...dbids);
      },
      now: () => clock,
    });
    const sessions = new ListenerSessions({
      plays: store.plays,
      servers: [{ url: SERVER, adminUser: 'admin', mounts: { [MOUNT]: 'main' } }],
      keepAddresses: false,
      logger: silentLogger,
      onLateSession: (channel, since) => playLog.recount(channel, since),
      now: () => clock,
    });
    const insert = async (second: number, title: string) =>
      store.tracks.insert({
        receivedSeq: await store.tracks.nextReceivedSeq(),
        receivedAt: iso(second),
        metadata: { artist: 'Band', title },
        play: { startedAt: iso(second), channel: 'main', kind: 'music', usage: 'feature' },
      });
    const first = await insert(0, 'first');
    await insert(180, 'second');
    playLog.started();
    const counted = async () => (await store.tracks.byDbid(first.dbid))?.play?.listeners;
    expect(await eventually(counted, (listeners) => listeners !== null && listeners !== undefined)).toEqual({ atp: 0, listener_seconds: 0, peak: 0 });
    expect(changed).toContain(first.dbid);

    // At 200 s a poll lists a listener who has been connected for 150 s: since 50 s, during the first play.
    clock = START + 200_000;
    await sessions.joined({ mount: MOUNT, clientId: '7', ip: '192.0.2.7', userAgent: 'VLC' }, 'poll', 150);
    expect(await eventually(counted, (listeners) => listeners?.atp === 1)).toEqual({ atp: 1, listener_seconds: 130, peak: 1 });
  });
});
