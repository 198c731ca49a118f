import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { errorMessage } from '../errors';
import { throttledLog, type Logger } from '../log';
import type { PlayLogStore, SessionKey, SessionSource } from '../store/plays';

// Listener sessions from the Icecast server the audience listens to (docs/play-log.md
// "Listener sessions"): which configured server and mount a report is about, the channel it
// feeds, and the address as a keyed hash. Both feeds (URL authentication, polling) come here,
// and only plausible sessions are kept (docs/play-log.md "Sessions that must be plausible"): a
// known server and mount, Icecast's numeric client id, a start after svc saw the mount live, a
// duration within playlog.sessionMaxHours, a replayed remove once, and at most
// playlog.maxOpenSessionsPerMount open on a mount.

/** One configured Icecast server (`playlog.icecast[]`). */
export interface IcecastServerConfig {
  readonly url: string;
  readonly adminUser: string;
  readonly adminPassword?: string;
  readonly poll?: number;
  readonly mounts: Readonly<Record<string, string>>;
}

export interface ListenerSessionsOptions {
  plays: PlayLogStore;
  servers: readonly IcecastServerConfig[];
  keepAddresses: boolean;
  /** The key of the address hash (addressKeyFrom): never stored in the database it protects. */
  addressKey: Buffer;
  /** playlog.maxOpenSessionsPerMount: a listener past it is not recorded, and that is logged. */
  maxOpenPerMount: number;
  /** playlog.sessionMaxHours in ms: a listener_remove claiming longer is not recorded. */
  sessionMaxMs: number;
  logger: Logger;
  /** A session learnt of late, connected since `since`: the plays it overlapped are counted again (PlayLog.recount). */
  onLateSession?: (channel: string, since: string) => Promise<void>;
  now?: () => number;
}

/** A listener as Icecast names it: in an auth call or a listclients entry. */
export interface ListenerReport {
  /** The server's name as Icecast knows it (`server`, `port` of an auth call); matched against the configured URLs. */
  host?: string;
  port?: string;
  /** The mount as requested, maybe with a query string. */
  mount: string;
  clientId: string;
  ip: string;
  userAgent: string;
}

/** Where a mount's listeners are counted: the configured server (its URL's origin) and the channel. */
export interface MountTarget {
  server: string;
  channel: string;
}

/** A listener_remove that arrives this long after the mount's source went away still belongs to that live stretch (Icecast drops the listeners after mount_remove). */
const AFTER_END_MS = 60_000;

/** Icecast's client id: `%lu` in auth_url.c, the `id` of a listclients entry. */
const CLIENT_ID = /^\d{1,20}$/;

export class ListenerSessions {
  private readonly now: () => number;
  private readonly report: (kind: string, message: string) => void;

  constructor(private readonly options: ListenerSessionsOptions) {
    this.now = options.now ?? Date.now;
    this.report = throttledLog((message) => options.logger.warn(message));
  }

  /** Whether any Icecast server is configured: without one, plays have no listener counts. */
  get configured(): boolean {
    return this.options.servers.length > 0;
  }

  /**
   * The configured server and channel of a mount: the server whose URL names the reported host
   * and port, else the first whose mounts list it. Undefined for a mount no channel is fed from.
   */
  target(mount: string, host?: string, port?: string): MountTarget | undefined {
    const path = mountPath(mount);
    const listing = this.options.servers.filter((server) => Object.hasOwn(server.mounts, path));
    const named = listing.find((server) => {
      const [serverHost, serverPort] = serverAddress(server.url);
      return serverHost === host && serverPort === port;
    });
    const server = named ?? listing[0];
    const channel = server?.mounts[path];
    return server && channel !== undefined ? { server: new URL(server.url).origin, channel } : undefined;
  }

  /** Open listener sessions per channel, over every configured server and mount (GET /metrics). */
  async listenersPerChannel(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const server of this.options.servers) {
      for (const [mount, channel] of Object.entries(server.mounts)) {
        const open = await this.options.plays.openSessions(new URL(server.url).origin, mount);
        counts.set(channel, (counts.get(channel) ?? 0) + open.length);
      }
    }
    return counts;
  }

  /** A listener joined (an auth listener_add, or first seen by a poll `connectedSeconds` ago). */
  async joined(report: ListenerReport, source: SessionSource, connectedSeconds = 0): Promise<boolean> {
    const target = this.plausibleTarget(report);
    if (!target) return false;
    const now = this.now();
    if (source === 'auth') await this.newRun(target, report, now);
    const connectedAt = new Date(now - connectedSeconds * 1000).toISOString();
    if (!(await this.open(target, report, source, connectedAt))) return false;
    if (connectedSeconds > 0) await this.recount(target.channel, connectedAt, report);
    return true;
  }

  /**
   * A listener left. An auth listener_remove names how long it listened: a session svc never saw
   * open (svc was down at its listener_add, or only listener_remove is configured) is kept whole,
   * if it is plausible: within sessionMaxHours, not ended already (a replay), and from no earlier
   * than svc saw the mount live (an earlier start is cut to it).
   */
  async left(report: ListenerReport, source: SessionSource, durationSeconds?: number): Promise<boolean> {
    const target = this.plausibleTarget(report);
    if (!target) return false;
    const key = this.keyOf(target, report);
    const now = this.now();
    const at = new Date(now).toISOString();
    if (await this.options.plays.closeSession(key, at)) return true;
    if (durationSeconds === undefined) return false;
    const refused = (why: string) => {
      this.report(
        `remove ${target.server} ${key.mount} ${why}`,
        `listener ${report.clientId.slice(0, 24)} on ${key.mount}: listener_remove not recorded (${why})`,
      );
      return false;
    };
    if (durationSeconds * 1000 > this.options.sessionMaxMs) return refused('a duration longer than playlog.sessionMaxHours');
    const claimed = new Date(now - durationSeconds * 1000).toISOString();
    if (await this.options.plays.endedSince(key, claimed)) return refused('this session was recorded already: a replay');
    const live = await this.options.plays.mountLive(target.server, key.mount);
    if (!live || (live.endedAt !== null && now - Date.parse(live.endedAt) > AFTER_END_MS)) {
      return refused('svc has seen no sign that the mount is live: poll it, or add mount_add');
    }
    const connectedAt = claimed < live.liveSince ? live.liveSince : claimed;
    if (!(await this.open(target, report, source, connectedAt))) return false;
    await this.options.plays.closeSession(key, at);
    await this.recount(target.channel, connectedAt, report);
    return true;
  }

  /** Icecast's mount_add: a source started on the mount; it is live from now. */
  async mountStarted(report: Pick<ListenerReport, 'mount' | 'host' | 'port'>): Promise<boolean> {
    const target = this.target(report.mount, report.host, report.port);
    if (!target) return false;
    await this.options.plays.markLive(target.server, mountPath(report.mount), new Date(this.now()).toISOString());
    return true;
  }

  /** Icecast's mount_remove: the source went away; its live stretch ends now. Answers the mount's target. */
  async mountEnded(report: Pick<ListenerReport, 'mount' | 'host' | 'port'>): Promise<MountTarget | undefined> {
    const target = this.target(report.mount, report.host, report.port);
    if (target) await this.options.plays.markEnded(target.server, mountPath(report.mount), new Date(this.now()).toISOString());
    return target;
  }

  /** The address as stored: a keyed hash (the key is not in the database), or as is with playlog.keepAddresses. */
  address(ip: string): string {
    if (this.options.keepAddresses) return ip;
    return createHmac('sha256', this.options.addressKey).update(ip).digest('hex');
  }

  /** Records a report; answers whether anything was recorded. A store failure is logged and never reaches Icecast (a listener is never refused for it). */
  async record(what: 'joined' | 'left', report: ListenerReport, source: SessionSource, seconds?: number): Promise<boolean> {
    try {
      return what === 'joined' ? await this.joined(report, source, seconds) : await this.left(report, source, seconds);
    } catch (error) {
      this.options.logger.warn(`listener ${report.clientId.slice(0, 24)} on ${report.mount.slice(0, 64)}: not recorded (${errorMessage(error)})`);
      return false;
    }
  }

  /** The target of a report that names a configured mount and an Icecast client id. */
  private plausibleTarget(report: ListenerReport): MountTarget | undefined {
    if (!CLIENT_ID.test(report.clientId)) return undefined;
    return this.target(report.mount, report.host, report.port);
  }

  /**
   * A listener_add is Icecast asking while the mount is being listened to: the mount is live now.
   * A lower client id than the mount's open sessions means Icecast restarted since (it counts from
   * 0 again): those sessions' removes will never come, and they end now.
   */
  private async newRun(target: MountTarget, report: ListenerReport, now: number): Promise<void> {
    const mount = mountPath(report.mount);
    const at = new Date(now).toISOString();
    await this.options.plays.markLive(target.server, mount, at);
    const closed = await this.options.plays.closeEarlierRun(target.server, mount, report.clientId, at);
    if (closed > 0) {
      this.options.logger.warn(`icecast ${target.server}${mount}: restarted (client ids start again); ${closed} session(s) of its earlier run closed`);
    }
  }

  /** Opens the session unless one is open under its key or the mount is at its cap (logged). */
  private async open(target: MountTarget, report: ListenerReport, source: SessionSource, connectedAt: string): Promise<boolean> {
    const key = this.keyOf(target, report);
    const session = { ...key, channel: target.channel, source, address: this.address(report.ip), userAgent: report.userAgent, connectedAt };
    const opened = await this.options.plays.openSession(session, this.options.maxOpenPerMount);
    if (opened === 'full') {
      this.report(
        `full ${target.server} ${key.mount}`,
        `icecast ${target.server}${key.mount}: ${this.options.maxOpenPerMount} listener sessions open (playlog.maxOpenSessionsPerMount); listener ${report.clientId} not recorded`,
      );
    }
    return opened === 'opened';
  }

  /** A session learnt of late: the plays it overlapped are counted again; a failure costs the recount only. */
  private async recount(channel: string, since: string, report: ListenerReport): Promise<void> {
    if (!this.options.onLateSession) return;
    await this.options.onLateSession(channel, since).catch((error: unknown) => {
      this.options.logger.warn(`listener ${report.clientId} on ${report.mount}: earlier plays not counted again (${errorMessage(error)})`);
    });
  }

  private keyOf(target: MountTarget, report: ListenerReport): SessionKey {
    return { server: target.server, mount: mountPath(report.mount), clientId: report.clientId };
  }
}

/** The mount without a query string (Icecast reports the raw request URI). */
export function mountPath(mount: string): string {
  const query = mount.indexOf('?');
  return query === -1 ? mount : mount.slice(0, query);
}

/** A configured server's host name and port (the scheme's default when the URL has none). */
export function serverAddress(serverUrl: string): [string, string] {
  const url = new URL(serverUrl);
  return [url.hostname, url.port || (url.protocol === 'https:' ? '443' : '80')];
}

/**
 * The key of the listener-address hash, never kept in the database it protects: derived from the
 * secret (HKDF-SHA256), or, without a secret, made at random when svc starts (docs/play-log.md
 * "Listener sessions").
 */
export function addressKeyFrom(secret: string): Buffer {
  if (secret === '') return randomBytes(32);
  return Buffer.from(hkdfSync('sha256', secret, 'svc', 'listener address hash', 32));
}

/** The configured Icecast servers that are not polled (their origins): URL authentication is their only feed, and svc warns at start. */
export function unpolledServers(servers: readonly IcecastServerConfig[]): string[] {
  return servers.filter((server) => server.poll === undefined).map((server) => new URL(server.url).origin);
}
