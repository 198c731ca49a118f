import type { PlayLogStore } from './plays';

// The listener sessions contract (docs/play-log.md "Listener sessions"), the half of the play log
// that Icecast feeds; each backend's listener-sessions.ts keeps it.

/** The half of PlayLogStore that Icecast feeds: each backend's listener-sessions.ts. */
export type ListenerSessionStore = Pick<
  PlayLogStore,
  | 'sessionPages'
  | 'countListeners'
  | 'openSession'
  | 'closeSession'
  | 'endedSince'
  | 'closeOverdue'
  | 'closeEarlierRun'
  | 'openSessions'
  | 'mountLive'
  | 'markLive'
  | 'markEnded'
>;
