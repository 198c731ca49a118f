import type { NowPlaying } from '../domain/current-track';
import type { Logger } from '../log';
import type { PlayLogStore } from '../store/plays';
import type { TrackStore } from '../store/tracks';
import { IcecastPoller } from './icecast-poller';
import type { FetchListClients } from './listclients-fetch';
import { ListenerSessions, type IcecastServerConfig } from './listener-sessions';
import { PlayLog } from './play-log';
import type { PlayPolicy } from './play-policy';

// The play log's background work, built in one order with no forward reference (docs/play-log.md):
// whether plays get listener counts is a fact of the config (countsListeners), so the play log
// is built first, the listener sessions then tell it of late sessions, and the poller feeds them.

/** The `playlog` keys: the policy, the Icecast servers the audience listens to, and the counting rules. */
export interface PlayLogSettings extends PlayPolicy {
  readonly icecast: readonly IcecastServerConfig[];
  readonly keepAddresses: boolean;
  readonly complement: boolean;
  readonly minSessionSeconds: number;
}

export interface PlayLogParts {
  playLog: PlayLog;
  listenerSessions: ListenerSessions;
  poller: IcecastPoller;
}

/** Whether ended plays get listener counts: only with an Icecast server to count them from. */
export function countsListeners(settings: Pick<PlayLogSettings, 'icecast'>): boolean {
  return settings.icecast.length > 0;
}

export function startPlayLog(deps: {
  settings: PlayLogSettings;
  plays: PlayLogStore;
  /** The current track is shown again when its play's end or count changes (showPlayChanges). */
  tracks: Pick<TrackStore, 'byDbid'>;
  nowPlaying: NowPlaying;
  logger: Logger;
  fetchListClients: FetchListClients;
}): PlayLogParts {
  const { settings, plays, logger } = deps;
  const playLog = new PlayLog({
    plays,
    policy: settings,
    logger,
    countsListeners: countsListeners(settings),
    complement: settings.complement,
    minSessionSeconds: settings.minSessionSeconds,
    onPlaysChanged: showPlayChanges(deps.nowPlaying, deps.tracks),
  });
  const listenerSessions = new ListenerSessions({
    plays,
    servers: settings.icecast,
    keepAddresses: settings.keepAddresses,
    logger,
    onLateSession: (channel, since) => playLog.recount(channel, since),
  });
  const poller = new IcecastPoller({ servers: settings.icecast, sessions: listenerSessions, plays, logger, fetchListClients: deps.fetchListClients });
  playLog.start();
  poller.start();
  return { playLog, listenerSessions, poller };
}

/** An end or a count of the current track shows on /v1/last and the streams at once (PlayLog's `onPlaysChanged`). */
export function showPlayChanges(nowPlaying: NowPlaying, tracks: Pick<TrackStore, 'byDbid'>): (dbids: readonly number[]) => Promise<void> {
  return async (dbids) => {
    const shown = nowPlaying.current();
    if (!shown || !dbids.includes(shown.dbid)) return;
    const fresh = await tracks.byDbid(shown.dbid);
    if (fresh?.play && nowPlaying.current()?.dbid === fresh.dbid) nowPlaying.update({ ...shown, play: fresh.play });
  };
}
