import { errorMessage } from '../errors';
import { throttledLog, type Logger } from '../log';
import { sleep } from '../signals';
import type { ListenerSession, PlayLogStore } from '../store/plays';
import { parseListClients, type ListedClient } from './listclients';
import type { FetchListClients } from './listclients-fetch';
import { serverAddress, type IcecastServerConfig, type ListenerSessions } from './listener-sessions';

// Polling an Icecast server's /admin/listclients for each configured mount (docs/play-log.md
// "Listener sessions"): the fallback that can never refuse a listener. A client first listed
// opens a session (back-dated by Icecast's `Connected` seconds); one no longer listed closes it.
// A session opened by URL authentication is closed only when it is missing from two polls in a
// row, so the listener_remove that is on its way wins.

export interface PollerOptions {
  servers: readonly IcecastServerConfig[];
  sessions: ListenerSessions;
  plays: PlayLogStore;
  logger: Logger;
  /** The admin request (listclients-fetch.ts in production). */
  fetchListClients: FetchListClients;
  /** Per request; a server that does not answer in time is asked again at the next poll. */
  timeoutMs?: number;
  now?: () => number;
}

const DEFAULT_TIMEOUT_MS = 5000;

export class IcecastPoller {
  private readonly stop = new AbortController();
  private readonly loops: Promise<void>[] = [];
  /** Per server and mount, the auth sessions not listed at the last poll, by id: when they were first missed. */
  private readonly missing = new Map<string, Map<number, string>>();
  private readonly report: (key: string, message: string) => void;
  private readonly now: () => number;

  constructor(private readonly options: PollerOptions) {
    this.report = throttledLog((message) => options.logger.warn(message));
    this.now = options.now ?? Date.now;
  }

  start(): void {
    for (const server of this.options.servers) {
      if (server.poll !== undefined) this.loops.push(this.loop(server, server.poll * 1000));
    }
  }

  async close(): Promise<void> {
    this.stop.abort();
    await Promise.all(this.loops);
  }

  /** One poll of every mount of a server (tests call it directly). */
  async pollOnce(server: IcecastServerConfig): Promise<void> {
    for (const mount of Object.keys(server.mounts)) {
      const listed = await this.listClients(server, mount);
      if (listed) await this.reconcile(server, mount, listed);
    }
  }

  private async loop(server: IcecastServerConfig, intervalMs: number): Promise<void> {
    while (!this.stop.signal.aborted) {
      try {
        await this.pollOnce(server);
      } catch (error) {
        this.report(`poll ${server.url}`, `icecast ${server.url}: listeners not polled (${errorMessage(error)})`);
      }
      await sleep(intervalMs, this.stop.signal, { unref: true }).catch(() => undefined);
    }
  }

  /** The mount's clients, or null when the server did not answer with a list (nothing is closed then). */
  private async listClients(server: IcecastServerConfig, mount: string): Promise<ListedClient[] | null> {
    const signal = AbortSignal.any([this.stop.signal, AbortSignal.timeout(this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS)]);
    const response = await this.options.fetchListClients(server, mount, signal);
    const { body } = response;
    // Icecast answers 400 "Source does not exist" for a mount without a source: nobody listens there.
    if (response.status === 400 && /source does not exist/i.test(body)) return [];
    if (response.status < 200 || response.status > 299) {
      this.report(`status ${server.url}`, `icecast ${server.url}: /admin/listclients answered ${response.status}`);
      return null;
    }
    return parseListClients(body);
  }

  private async reconcile(server: IcecastServerConfig, mount: string, listed: readonly ListedClient[]): Promise<void> {
    const { sessions, plays } = this.options;
    const [host, port] = serverAddress(server.url);
    const target = sessions.target(mount, host, port);
    if (!target) return;
    const open = await plays.openSessions(target.server, mount);
    const openIds = new Set(open.map((session) => session.clientId));
    for (const client of listed) {
      if (openIds.has(client.id)) continue;
      await sessions.joined({ host, port, mount, clientId: client.id, ip: client.ip, userAgent: client.userAgent }, 'poll', client.connectedSeconds);
    }
    const listedIds = new Set(listed.map((client) => client.id));
    const mountKey = `${target.server} ${mount}`;
    const missedBefore = this.missing.get(mountKey) ?? new Map<number, string>();
    const missedNow = new Map<number, string>();
    const at = new Date(this.now()).toISOString();
    for (const session of open.filter((candidate) => !listedIds.has(candidate.clientId))) {
      const firstMissed = missedBefore.get(session.id);
      if (session.source === 'auth' && firstMissed === undefined) missedNow.set(session.id, at);
      else await closeListed(plays, session, firstMissed ?? at);
    }
    this.missing.set(mountKey, missedNow);
  }
}

function closeListed(plays: PlayLogStore, session: ListenerSession, at: string): Promise<boolean> {
  return plays.closeSession({ server: session.server, mount: session.mount, clientId: session.clientId }, at);
}
