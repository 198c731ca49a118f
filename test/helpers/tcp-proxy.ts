import net from 'node:net';
import type { AddressInfo } from 'node:net';

// A loopback TCP proxy that a test can cut, stall and restore: a database outage without
// touching the database server.
// - cut: every open connection is destroyed and new ones are closed at once;
// - refuseNew: new connections are closed at once and open ones destroyed, except (optionally)
//   the ones that sent `LISTEN` (PostgreSQL's simple query protocol carries the SQL text as is):
//   the notifications still arrive while every other connection is refused;
// - stall: a silent partition. Connections stay open and new ones are accepted, but no byte
//   passes either way until restore (then everything held goes through).

export interface TcpProxy {
  port: number;
  cut(): void;
  refuseNew(options?: { keepListening?: boolean }): void;
  stall(): void;
  freeze(): void;
  /** Bytes a freeze has kept and restore has not yet handed to the other side's socket. */
  heldBytes(): number;
  restore(): void;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
  listening: boolean;
  /** What a freeze kept, per direction, in arrival order. */
  kept?: { toUpstream: Buffer[]; toClient: Buffer[] };
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const open = new Set<Pair>();
  let refusing = false;
  let stalled = false;
  let frozen = false;

  const flow = (pair: Pair) => {
    pair.client.pipe(pair.upstream);
    pair.upstream.pipe(pair.client);
  };
  const hold = (pair: Pair) => {
    pair.client.unpipe(pair.upstream);
    pair.upstream.unpipe(pair.client);
    pair.client.pause();
    pair.upstream.pause();
  };
  const keep = (pair: Pair) => {
    pair.client.unpipe(pair.upstream);
    pair.upstream.unpipe(pair.client);
    const kept = { toUpstream: [] as Buffer[], toClient: [] as Buffer[] };
    pair.kept = kept;
    pair.client.on('data', (chunk: Buffer) => pair.kept === kept && kept.toUpstream.push(chunk));
    pair.upstream.on('data', (chunk: Buffer) => pair.kept === kept && kept.toClient.push(chunk));
    // unpipe() left them paused: a new 'data' listener alone does not resume them.
    pair.client.resume();
    pair.upstream.resume();
  };
  const thaw = (pair: Pair) => {
    const kept = pair.kept;
    if (!kept) return;
    pair.kept = undefined;
    for (const chunk of kept.toUpstream) pair.upstream.write(chunk);
    for (const chunk of kept.toClient) pair.client.write(chunk);
    kept.toUpstream.length = 0;
    kept.toClient.length = 0;
    flow(pair);
  };
  const drop = (pair: Pair) => {
    pair.client.destroy();
    pair.upstream.destroy();
    open.delete(pair);
  };

  const server = net.createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const pair: Pair = { client, upstream: net.connect(targetPort, targetHost), listening: false };
    open.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (!pair.listening && chunk.includes('LISTEN ')) pair.listening = true;
    });
    client.on('error', () => drop(pair)).on('close', () => drop(pair));
    pair.upstream.on('error', () => drop(pair)).on('close', () => drop(pair));
    if (stalled) hold(pair);
    else if (frozen) keep(pair);
    else flow(pair);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      refusing = true;
      for (const pair of open) drop(pair);
    },
    refuseNew(options = {}) {
      refusing = true;
      for (const pair of open) if (!(options.keepListening && pair.listening)) drop(pair);
    },
    stall() {
      stalled = true;
      for (const pair of open) hold(pair);
    },
    freeze() {
      frozen = true;
      for (const pair of open) keep(pair);
    },
    heldBytes() {
      let total = 0;
      for (const pair of open) for (const chunk of [...(pair.kept?.toUpstream ?? []), ...(pair.kept?.toClient ?? [])]) total += chunk.length;
      return total;
    },
    restore() {
      refusing = false;
      if (stalled) for (const pair of open) flow(pair);
      if (frozen) for (const pair of open) thaw(pair);
      stalled = false;
      frozen = false;
    },
    close() {
      refusing = true;
      for (const pair of open) drop(pair);
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A proxy in front of the database `databaseUrl` names, and the same URL through the proxy. */
export async function proxyInFrontOf(databaseUrl: string): Promise<{ proxy: TcpProxy; url: string }> {
  const url = new URL(databaseUrl);
  const proxy = await startTcpProxy(Number(url.port || 5432), url.hostname);
  url.port = String(proxy.port);
  return { proxy, url: url.toString() };
}
