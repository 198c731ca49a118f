import { asObject, getWithQuery, postJson, request } from '../../helpers/http';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { WebSocket } from 'ws';
import { connectClient } from '../../helpers/ws-client';

// GET /v1/history and DELETE /v1/history/<dbid> (docs/decisions.md "History"), by outcome.

interface HistoryAnswer {
  tracks: Record<string, unknown>[];
  next?: string;
}

function asHistory(value: unknown): HistoryAnswer {
  const body = asObject(value);
  if (!Array.isArray(body.tracks)) throw new Error(`no tracks array in ${JSON.stringify(body)}`);
  return body as unknown as HistoryAnswer;
}

/** Stores a record straight through the real store, with a chosen received time. */
async function storeAt(t: TestServer, receivedAt: string, metadata: Record<string, string>): Promise<number> {
  const tracks = t.server.tracks;
  return (await tracks.insert({ receivedSeq: await tracks.nextReceivedSeq(), receivedAt, metadata })).dbid;
}

describe('GET /v1/history', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('When nothing is stored, then it answers an empty list and no next link', async () => {
    const res = await request(`${t.url}/v1/history`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.json).toEqual({ tracks: [] });
  });

  it('When a few hundred records are paged through the next links, then every record comes exactly once, newest first', async () => {
    const submitted: number[] = [];
    for (let i = 0; i < 250; i++) {
      const res = await postJson(`${t.url}/v1/remoteinput`, { artist: `Artist ${i}`, title: `Title ${i}` });
      submitted.push(asObject(res.json).dbid as number);
    }
    const seen: number[] = [];
    let path: string | undefined = 'v1/history?limit=37';
    let pages = 0;
    while (path !== undefined) {
      const res = await request(new URL(path, `${t.url}/`).href);
      expect(res.status).toBe(200);
      const page = asHistory(res.json);
      seen.push(...page.tracks.map((track) => track.dbid as number));
      path = page.next;
      pages++;
    }
    expect(pages).toBe(Math.ceil(250 / 37));
    expect(seen).toEqual([...submitted].reverse());
  });

  it('When a record is listed, then it is the /v1/last shape of that record plus received_at (ISO 8601 UTC, ms)', async () => {
    const last = await request(`${t.url}/v1/last`);
    const res = await request(`${t.url}/v1/history?limit=1`);
    const page = asHistory(res.json);
    const { received_at, ...rest } = page.tracks[0];
    expect(rest).toEqual(last.json);
    expect(received_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(page.next).toBe(`v1/history?before=${String(rest.dbid)}&limit=1`);
  });

  it('When the default limit applies, then a page holds 100 records', async () => {
    const page = asHistory((await request(`${t.url}/v1/history`)).json);
    expect(page.tracks).toHaveLength(100);
  });

  it('When If-None-Match carries the ETag, then 304; after a new record, 200 with another ETag', async () => {
    const first = await request(`${t.url}/v1/history?limit=5`);
    const etag = first.headers.get('etag') as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    const cached = await request(`${t.url}/v1/history?limit=5`, { headers: { 'If-None-Match': etag } });
    expect(cached.status).toBe(304);
    expect(cached.text).toBe('');
    await getWithQuery(`${t.url}/v1/remoteinput`, { artist: 'New', title: 'Record' });
    const changed = await request(`${t.url}/v1/history?limit=5`, { headers: { 'If-None-Match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('When another method is used on /v1/history, then 405 with Allow; HEAD answers like GET without a body', async () => {
    const post = await request(`${t.url}/v1/history`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toContain('GET');
    const head = await request(`${t.url}/v1/history?limit=3`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('etag')).toBe((await request(`${t.url}/v1/history?limit=3`)).headers.get('etag'));
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
    ['before=-3', 'before'],
    ['before=1.5', 'before'],
    ['since=yesterday', 'since'],
    ['until=2026-02-30T00:00:00Z', 'until'],
    ['since=2026-11-22T20:00:00 01:00', 'since'],
    ['page=2', 'page'],
    ['limit=5&limit=6', 'limit'],
  ])('When the query is %s, then 400 naming %s', async (query, name) => {
    const res = await request(`${t.url}/v1/history?${query}`);
    expect(res.status).toBe(400);
    expect(asObject(res.json).error).toContain(`'${name}'`);
  });
});

describe('GET /v1/history filters', () => {
  let t: TestServer;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    t = await startTestServer();
    // A two-hour set, one track every 20 minutes, 20:00 to 21:40 UTC.
    for (let i = 0; i < 6; i++) {
      const at = new Date(Date.UTC(2026, 10, 22, 20, i * 20)).toISOString();
      ids[at] = await storeAt(t, at, { artist: 'DJ', title: `Track ${i}` });
    }
  });
  afterAll(() => t.close());

  const titles = async (query: string) => asHistory((await request(`${t.url}/v1/history?${query}`)).json).tracks.map((track) => track.title);

  it('When since is given, then it is inclusive', async () => {
    expect(await titles('since=2026-11-22T21:00:00Z')).toEqual(['Track 5', 'Track 4', 'Track 3']);
  });

  it('When until is given, then it is exclusive', async () => {
    expect(await titles('until=2026-11-22T20:40:00.000Z')).toEqual(['Track 1', 'Track 0']);
  });

  it('When both are given with an offset, then the range is read in UTC', async () => {
    expect(await titles(`since=${encodeURIComponent('2026-11-22T21:20:00+01:00')}&until=2026-11-22T21:00Z`)).toEqual(['Track 2', 'Track 1']);
  });

  it('When a filtered range spans pages, then the next link keeps the filters', async () => {
    const first = asHistory((await request(`${t.url}/v1/history?since=2026-11-22T20:20:00Z&until=2026-11-22T21:40:00Z&limit=2`)).json);
    expect(first.tracks.map((track) => track.title)).toEqual(['Track 4', 'Track 3']);
    const next = new URL(first.next as string, `${t.url}/`);
    expect(next.searchParams.get('since')).toBe('2026-11-22T20:20:00.000Z');
    const rest: unknown[] = [];
    let path: string | undefined = first.next;
    while (path) {
      const page = asHistory((await request(new URL(path, `${t.url}/`).href)).json);
      rest.push(...page.tracks.map((track) => track.title));
      path = page.next;
    }
    expect(rest).toEqual(['Track 2', 'Track 1']);
  });

  it('When before names a deleted record, then paging goes on from where it stood', async () => {
    const at = new Date(Date.UTC(2026, 10, 22, 21, 0)).toISOString();
    const dbid = ids[at];
    expect(await t.server.tracks.remove(dbid)).toBe(true);
    expect(await titles(`before=${dbid}&limit=10`)).toEqual(['Track 2', 'Track 1', 'Track 0']);
  });
});

describe('DELETE /v1/history/<dbid>', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { secret: 's3cret' } });
  });
  afterAll(() => t.close());

  const submit = async (title: string) =>
    asObject((await postJson(`${t.url}/v1/remoteinput`, { artist: 'DJ', title }, { 'X-SVC-Client-Auth': 's3cret' })).json).dbid as number;

  it('When the secret is missing or wrong, then 403 with the remoteinput messages and nothing is deleted', async () => {
    const dbid = await submit('Keep me');
    const missing = await request(`${t.url}/v1/history/${dbid}`, { method: 'DELETE' });
    expect(missing.status).toBe(403);
    expect(missing.json).toEqual({ error: 'Missing secret in request' });
    const wrong = await request(`${t.url}/v1/history/${dbid}`, { method: 'DELETE', headers: { 'X-SVC-Client-Auth': 'nope' } });
    expect(wrong.status).toBe(403);
    expect(wrong.json).toEqual({ error: 'Invalid secret' });
    const wrongHeaderRightQuery = await request(`${t.url}/v1/history/${dbid}?secret=s3cret`, { method: 'DELETE', headers: { 'X-SVC-Client-Auth': 'nope' } });
    expect(wrongHeaderRightQuery.status).toBe(403);
    expect(await t.server.tracks.byDbid(dbid)).not.toBeNull();
  });

  it('When the dbid is unknown, then 404; when it is not a number, then 400', async () => {
    const headers = { 'X-SVC-Client-Auth': 's3cret' };
    const unknown = await request(`${t.url}/v1/history/999999`, { method: 'DELETE', headers });
    expect(unknown.status).toBe(404);
    expect(asObject(unknown.json).error).toContain('999999');
    const malformed = await request(`${t.url}/v1/history/abc`, { method: 'DELETE', headers });
    expect(malformed.status).toBe(400);
    expect(asObject(malformed.json).error).toContain('dbid');
  });

  it('When an older record is deleted with the query secret, then 204, it leaves the history, and the current track stays', async () => {
    const older = await submit('Mistake');
    const current = await submit('Current');
    const res = await request(`${t.url}/v1/history/${older}?secret=s3cret`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    const listed = asHistory((await request(`${t.url}/v1/history`)).json).tracks.map((track) => track.dbid);
    expect(listed).not.toContain(older);
    expect(listed[0]).toBe(current);
    expect(asObject((await request(`${t.url}/v1/last`)).json).dbid).toBe(current);
    const again = await request(`${t.url}/v1/history/${older}`, { method: 'DELETE', headers: { 'X-WNP-Client-Auth': 's3cret' } });
    expect(again.status).toBe(404);
  });

  it('When the current track is deleted, then the previous one becomes current and a stream client is told', async () => {
    const previous = await submit('Previous');
    const current = await submit('Test track');
    const client = await connectClient(t.url);
    try {
      await client.waitFor((frame) => frame.type === 'track' && frame.dbid === current);
      const from = client.frames.length;
      const res = await request(`${t.url}/v1/history/${current}`, { method: 'DELETE', headers: { 'X-SVC-Client-Auth': 's3cret' } });
      expect(res.status).toBe(204);
      const announced = await client.waitFor((frame) => frame.type === 'track', { from });
      expect(announced.dbid).toBe(previous);
      expect(asObject((await request(`${t.url}/v1/last`)).json)).toMatchObject({ dbid: previous, title: 'Previous' });
    } finally {
      client.close();
    }
  });
});

describe('DELETE of the current track on /wsstream', () => {
  it('When the current track is deleted, then a /wsstream client gets a frame for the previous one', async () => {
    const t = await startTestServer();
    try {
      for (const title of ['Previous', 'Mistake']) await postJson(`${t.url}/v1/remoteinput`, { artist: 'DJ', title });
      const socket = new WebSocket(`${t.url.replace(/^http/, 'ws')}/wsstream`);
      const titles: unknown[] = [];
      const waiting = new Set<() => void>();
      // Text frames, each one Buffer (ws delivers a text message as a single Buffer by default).
      socket.on('message', (data: Buffer) => {
        titles.push((JSON.parse(data.toString('utf8')) as { title?: unknown }).title);
        for (const wake of [...waiting]) wake();
      });
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      /** The first `count` titles, or a failure when the socket closes first. */
      const frames = (count: number) =>
        Promise.race([
          new Promise<unknown[]>((resolve) => {
            const wake = () => {
              if (titles.length < count) return;
              waiting.delete(wake);
              resolve(titles.slice(0, count));
            };
            waiting.add(wake);
            wake();
          }),
          closed.then(() => Promise.reject(new Error(`socket closed after ${JSON.stringify(titles)}`))),
        ]);
      try {
        // Connected after both submissions: the first frame is the current track.
        expect(await frames(1)).toEqual(['Mistake']);
        const current = asObject((await request(`${t.url}/v1/last`)).json).dbid;
        expect((await request(`${t.url}/v1/history/${String(current)}`, { method: 'DELETE' })).status).toBe(204);
        expect(await frames(2)).toEqual(['Mistake', 'Previous']);
      } finally {
        socket.terminate();
      }
    } finally {
      await t.close();
    }
  });
});

describe('History across a restart', () => {
  it('When the server restarts on the same database, then the history is the same', async () => {
    const t = await startTestServer();
    try {
      for (const title of ['One', 'Two', 'Three']) await postJson(`${t.url}/v1/remoteinput`, { artist: 'DJ', title });
      const before = (await request(`${t.url}/v1/history`)).json;
      await t.restart();
      const after = await request(`${t.url}/v1/history`);
      expect(after.json).toEqual(before);
      expect(asHistory(after.json).tracks.map((track) => track.title)).toEqual(['Three', 'Two', 'One']);
    } finally {
      await t.close();
    }
  });
});
