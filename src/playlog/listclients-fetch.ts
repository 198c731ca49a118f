import type { IcecastServerConfig } from './listener-sessions';

// The Icecast server's admin answer for one mount (GET /admin/listclients, Basic with the
// configured admin user): the play log's one outbound request, behind the port the poller
// (icecast-poller.ts) is handed. The answer's body is read by listclients.ts.

export interface ListClientsAnswer {
  status: number;
  body: string;
}

/** Asks one server for one mount's clients; `signal` ends it (the poller's stop, its timeout). */
export type FetchListClients = (server: IcecastServerConfig, mount: string, signal: AbortSignal) => Promise<ListClientsAnswer>;

export const fetchListClients: FetchListClients = async (server, mount, signal) => {
  const url = new URL('/admin/listclients', server.url);
  url.searchParams.set('mount', mount);
  const credentials = Buffer.from(`${server.adminUser}:${server.adminPassword ?? ''}`).toString('base64');
  const response = await fetch(url, { headers: { authorization: `Basic ${credentials}` }, signal, redirect: 'manual' });
  return { status: response.status, body: await response.text() };
};
