import { countListeners, listenerOf, type PlayListeners, type SessionInterval } from '../domain/play';
import type { ListenerSession, PlayLogStore, PlayRange, PlayRow } from '../store/plays';

// Recounting the listeners of ended plays from the stored sessions under the current config
// (docs/play-log.md "Recounting"): each session's channel is its mount's channel as configured
// now, not the one it was recorded under, so a mapping fixed later repairs the plays it missed.
// Counted by the play log's own rule (domain/play.ts countListeners); written only with `apply`.

export type RecountStore = Pick<PlayLogStore, 'playPages' | 'sessionPages' | 'replaceListeners'>;

export interface RecountOptions {
  range: PlayRange;
  /** The channel a session's server and mount feed under the current config; undefined: none. */
  channelOf: (session: ListenerSession) => string | undefined;
  minSessionSeconds: number;
  nowMs: number;
  apply: boolean;
}

export interface ChannelRecount {
  channel: string;
  plays: number;
  changed: number;
  atpBefore: number;
  atpAfter: number;
}

export interface RecountResult {
  applied: boolean;
  channels: ChannelRecount[];
}

const same = (a: PlayListeners | null | undefined, b: PlayListeners): boolean =>
  a !== null && a !== undefined && a.atp === b.atp && a.listener_seconds === b.listener_seconds && a.peak === b.peak;

/** The sessions overlapping one page of plays, grouped by their channel under the current config. */
async function sessionsFor(store: RecountStore, page: readonly PlayRow[], channelOf: RecountOptions['channelOf']): Promise<Map<string, SessionInterval[]>> {
  const from = page[0]?.play.startedAt ?? '';
  const to = page.reduce((latest, row) => ((row.play.endedAt ?? '') > latest ? (row.play.endedAt ?? '') : latest), '');
  const byChannel = new Map<string, SessionInterval[]>();
  if (to <= from) return byChannel;
  for await (const sessions of store.sessionPages({ from, to })) {
    for (const session of sessions) {
      const channel = channelOf(session);
      if (channel === undefined) continue;
      const list = byChannel.get(channel) ?? [];
      list.push({ connectedAt: session.connectedAt, disconnectedAt: session.disconnectedAt, listener: listenerOf(session.address, session.userAgent) });
      byChannel.set(channel, list);
    }
  }
  return byChannel;
}

/** Every ended play in the range counted again, page by page; before -> after per channel. */
export async function recountPlays(store: RecountStore, options: RecountOptions): Promise<RecountResult> {
  const totals = new Map<string, ChannelRecount>();
  for await (const page of store.playPages(options.range)) {
    const ended = page.filter((row) => row.play.endedAt !== null && row.play.endedAt !== undefined);
    if (ended.length === 0) continue;
    const sessions = await sessionsFor(store, ended, options.channelOf);
    for (const row of ended) {
      const endedAt = row.play.endedAt ?? row.play.startedAt;
      const overlapping = (sessions.get(row.play.channel) ?? []).filter(
        (session) => session.connectedAt < endedAt && (session.disconnectedAt === null || session.disconnectedAt > row.play.startedAt),
      );
      const after = countListeners({ startedAt: row.play.startedAt, endedAt }, overlapping, options.minSessionSeconds, options.nowMs);
      const before = row.play.listeners ?? null;
      const total = totals.get(row.play.channel) ?? { channel: row.play.channel, plays: 0, changed: 0, atpBefore: 0, atpAfter: 0 };
      total.plays++;
      total.atpBefore += before?.atp ?? 0;
      total.atpAfter += after.atp;
      if (!same(before, after)) {
        total.changed++;
        if (options.apply) await store.replaceListeners(row.dbid, after);
      }
      totals.set(row.play.channel, total);
    }
  }
  return { applied: options.apply, channels: [...totals.values()].sort((a, b) => a.channel.localeCompare(b.channel)) };
}

/** A stored session's channel under the current config: its server's mount as configured now (ListenerSessions.target). */
export function sessionChannel(
  sessions: { target(mount: string, host?: string, port?: string): { channel: string } | undefined },
  session: ListenerSession,
): string | undefined {
  const url = URL.canParse(session.server) ? new URL(session.server) : undefined;
  const port = url === undefined ? undefined : url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
  return sessions.target(session.mount, url?.hostname, port)?.channel;
}
