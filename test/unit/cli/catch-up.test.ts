import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_CATCH_UP, catchUpAfter } from '../../../src/cli/catch-up';
import { SvcClient } from '../../../src/cli/client';

// docs/cli.md "`svc last`": after a reconnect, svc last --follow prints what was stored after the
// last dbid it printed, oldest first, and says on stderr what it cannot print. A local server
// answers GET /v1/history the way svc does (newest first, `next` while more pages follow).

async function historyServer(tracks: number[], more: boolean, failFirst = 0): Promise<{ client: SvcClient; close: () => Promise<void> }> {
  let failures = failFirst;
  const server = http.createServer((_request, response) => {
    if (failures > 0) {
      failures -= 1;
      response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' }).end('{"error":"Server busy"}');
      return;
    }
    const body = {
      tracks: tracks.map((dbid) => ({ dbid, title: `T${dbid}`, received_at: '2026-01-01T00:00:00.000Z' })),
      ...(more ? { next: 'v1/history?before=1&limit=1000' } : {}),
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    client: new SvcClient({ baseUrl: new URL(`http://127.0.0.1:${port}/`), secret: '', timeoutMs: 2000 }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const stop = new AbortController().signal;

describe('catchUpAfter', () => {
  it('When tracks were stored after the last one printed, then they come oldest first, as /v1/last shows them', async () => {
    const { client, close } = await historyServer([9, 8, 7, 6, 5], false);
    const caught = await catchUpAfter(client, 6, stop);
    expect(caught.tracks).toEqual([
      { dbid: 7, title: 'T7' },
      { dbid: 8, title: 'T8' },
      { dbid: 9, title: 'T9' },
    ]);
    expect(caught.notes).toEqual([]);
    await close();
  });

  it('When more were stored than one catch-up reads, then it says so', async () => {
    const { client, close } = await historyServer([2000, 1999], true);
    const caught = await catchUpAfter(client, 5, stop);
    expect(caught.notes).toEqual([expect.stringContaining(`more than ${MAX_CATCH_UP} tracks were stored while reconnecting`)]);
    await close();
  });

  it('When the server no longer keeps the records after the last one printed, then it says the gap is longer than what it keeps', async () => {
    const { client, close } = await historyServer([40, 39], false);
    const caught = await catchUpAfter(client, 5, stop);
    expect(caught.tracks.map((track) => track.dbid)).toEqual([39, 40]);
    expect(caught.notes).toEqual([expect.stringMatching(/after dbid 5 and before dbid 39 are no longer kept.*longer than what it keeps/)]);
    await close();
  });

  it('When the server is busy at first, then it asks again', async () => {
    const { client, close } = await historyServer([7, 6], false, 2);
    expect((await catchUpAfter(client, 6, stop)).tracks.map((track) => track.dbid)).toEqual([7]);
    await close();
  });

  it("When the server's newest record is older than the last one printed, then its records started over", async () => {
    const { client, close } = await historyServer([2, 1], false);
    expect(await catchUpAfter(client, 50, stop)).toEqual({ tracks: [], notes: [], restarted: true });
    await close();
  });
});
