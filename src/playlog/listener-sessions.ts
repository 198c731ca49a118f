import { createHmac } from 'node:crypto';
import { errorMessage } from '../errors';
import type { Logger } from '../log';
import type { PlayLogStore, SessionKey, SessionSource } from '../store/plays';

// Listener sessions from the Icecast server the audience listens to (docs/play-log.md
// "Listener sessions"): which configured server and mount a report is about, the channel it
// feeds, and the address as a keyed hash. Both feeds (URL authentication, polling) come here.

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

export class ListenerSessions {
  private key: Promise<string> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: ListenerSessionsOptions) {
    this.now = options.now ?? Date.now;
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
    const target = this.target(report.mount, report.host, report.port);
    if (!target) return false;
    const connectedAt = new Date(this.now() - connectedSeconds * 1000).toISOString();
    await this.options.plays.openSession({
      ...this.keyOf(target, report),
      channel: target.channel,
      source,
      address: await this.address(report.ip),
      userAgent: report.userAgent,
      connectedAt,
    });
    if (connectedSeconds > 0 && this.options.onLateSession) {
      await this.options.onLateSession(target.channel, connectedAt).catch((error: unknown) => {
        this.options.logger.warn(`listener ${report.clientId} on ${report.mount}: earlier plays not counted again (${errorMessage(error)})`);
      });
    }
    return true;
  }

  /**
   * A listener left. An auth listener_remove names how long it listened: a session svc never saw
   * open (svc was down at its listener_add, or only listener_remove is configured) is kept whole.
   */
  async left(report: ListenerReport, source: SessionSource, durationSeconds?: number): Promise<boolean> {
    const target = this.target(report.mount, report.host, report.port);
    if (!target) return false;
    const key = this.keyOf(target, report);
    const at = new Date(this.now()).toISOString();
    if (await this.options.plays.closeSession(key, at)) return true;
    if (durationSeconds === undefined) return false;
    await this.joined(report, source, durationSeconds);
    return this.options.plays.closeSession(key, at);
  }

  /** The address as stored: a keyed hash (the key is the database's own), or as is with playlog.keepAddresses. */
  async address(ip: string): Promise<string> {
    if (this.options.keepAddresses) return ip;
    this.key ??= this.options.plays.addressKey().catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return createHmac('sha256', await this.key)
      .update(ip)
      .digest('hex');
  }

  /** Records a report; answers whether anything was recorded. A store failure is logged and never reaches Icecast (a listener is never refused for it). */
  async record(what: 'joined' | 'left', report: ListenerReport, source: SessionSource, seconds?: number): Promise<boolean> {
    try {
      return what === 'joined' ? await this.joined(report, source, seconds) : await this.left(report, source, seconds);
    } catch (error) {
      this.options.logger.warn(`listener ${report.clientId} on ${report.mount}: not recorded (${errorMessage(error)})`);
      return false;
    }
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
