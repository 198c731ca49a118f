import net from 'node:net';
import { asObject, postJson, request } from '../../helpers/http';
import { openSse, type SseClient } from '../../helpers/sse-client';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { until } from '../../helpers/eventually';

// GET /v1/events against a real server with a real streaming reader: the current track at
// once, live changes and updates, deletion, replay after Last-Event-ID or ?since= (in order, no
// duplicates), and a reader that stops reading while large tracks keep coming.

const dbidOf = (res: { json: unknown }) => Number(asObject(res.json).dbid);

describe('GET /v1/events', () => {
  let t: TestServer;
  const clients: SseClient[] = [];
  const open = async (path = '/v1/events', headers: Record<string, string> = {}) => {
    const client = await openSse(`${t.url}${path}`, headers);
    clients.push(client);
    return client;
  };
  const submit = async (title: string) => {
    const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Moderat', title });
    expect(res.status).toBe(200);
    return dbidOf(res);
  };

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });
  afterAll(async () => {
    await t.close();
  });

  test('When nothing is playing, then the stream opens with retry: 3000 and the proxy and CORS headers, and the first track arrives live as the /v1/last JSON', async () => {
    const client = await open('/v1/events', { Origin: 'http://widget.example' });
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(client.headers['x-accel-buffering']).toBe('no');
    expect(client.headers['cache-control']).toMatch(/^no-cache/);
    expect(client.headers['access-control-allow-origin']).toBe('*');
    const dbid = await submit('A New Error');
    const event = await client.next();
    const last = await request(`${t.url}/v1/last`);
    expect(event).toEqual({ event: 'track', id: String(dbid), data: last.text });
    expect(client.retries).toEqual([3000]);
    expect(client.events).toHaveLength(1);
  });

  test('When a track is playing, then a new reader gets it at once', async () => {
    const last = await request(`${t.url}/v1/last`);
    const client = await open();
    expect(await client.next()).toEqual({ event: 'track', id: String(dbidOf(last)), data: last.text });
  });

  test('When the current track is deleted, then every reader gets the track that is current now', async () => {
    const before = await submit('Bad Kingdom');
    const client = await open();
    expect((await client.next()).id).toBe(String(before));
    const doomed = await submit('Reminder');
    expect((await client.next()).id).toBe(String(doomed));
    expect((await request(`${t.url}/v1/history/${doomed}`, { method: 'DELETE' })).status).toBe(204);
    const now = await client.next();
    expect(now.id).toBe(String(before));
    expect(now.data).toBe((await request(`${t.url}/v1/last`)).text);
  });

  test.each([
    ['Last-Event-ID', (dbid: number) => ['/v1/events', { 'Last-Event-ID': String(dbid) }] as const],
    ['?since=', (dbid: number) => [`/v1/events?since=${dbid}`, {}] as const],
  ])('When a reader comes back with %s, then it gets what it missed oldest first, each once, then live', async (_name, target) => {
    const seen = await submit('Seen');
    const missed = [await submit('Missed 1'), await submit('Missed 2'), await submit('Missed 3')];
    const [path, headers] = target(seen);
    const client = await open(path, headers);
    const replayed = [await client.next(), await client.next(), await client.next()];
    expect(replayed.map((event) => Number(event.id))).toEqual(missed);
    expect(replayed.map((event) => asObject(JSON.parse(event.data)).title)).toEqual(['Missed 1', 'Missed 2', 'Missed 3']);
    const live = await submit('Live');
    expect(Number((await client.next()).id)).toBe(live);
    expect(client.events.map((event) => Number(event.id))).toEqual([...missed, live]);
  });

  test('When a reader comes back having seen the current track, then nothing is repeated', async () => {
    const current = await submit('Current');
    const client = await open('/v1/events', { 'Last-Event-ID': String(current) });
    const next = await submit('Next');
    expect(Number((await client.next()).id)).toBe(next);
    expect(client.events).toHaveLength(1);
  });

  test('When more than 100 records were missed, then all of them come in pieces, oldest first, ending with the current one', async () => {
    const first = await submit('Gap start');
    const dbids: number[] = [];
    for (let i = 0; i < 105; i += 1) dbids.push(await submit(`Gap ${i}`));
    const client = await open(`/v1/events?since=${first}`);
    const events: number[] = [];
    for (let i = 0; i < 105; i += 1) events.push(Number((await client.next()).id));
    expect(events).toEqual(dbids);
  });

  test.each(['abc', '-1', '1.5'])('When ?since=%s is not a dbid, then 400', async (since) => {
    const res = await request(`${t.url}/v1/events?since=${since}`);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "Invalid 'since': expected a dbid (a non-negative integer)" });
  });

  test('When a page on another origin asks before reconnecting with Last-Event-ID, then the preflight allows that header', async () => {
    const res = await request(`${t.url}/v1/events`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://widget.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'last-event-id' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Last-Event-ID/);
  });
});

describe('GET /v1/events with a reader that stops reading', () => {
  jest.setTimeout(120_000);
  const MAX_QUEUED = 4 * 1024 * 1024;
  const BIG = 60_000;
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({ config: { maxFieldLength: BIG * 2, limits: { maxQueuedBytes: MAX_QUEUED } } });
  });
  afterAll(async () => {
    await t.close();
  });

  test('When 300 large tracks are submitted, then its unsent bytes stay bounded, it is closed, and a reading client gets every track in order', async () => {
    // Asks for the stream and never reads a byte of it: the kernel's buffers fill, then svc's.
    const port = new URL(t.url).port;
    const stalled = net.connect(Number(port), '127.0.0.1');
    stalled.pause();
    await new Promise<void>((resolve) => stalled.once('connect', () => resolve()));
    stalled.write(`GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    const stalledClosed = new Promise<void>((resolve) => stalled.once('close', () => resolve()));
    stalled.on('error', () => undefined);
    while (t.server.events.readerCount() < 1) await new Promise((resolve) => setImmediate(resolve));
    const reader = await openSse(`${t.url}/v1/events`);

    let peakUnsent = 0;
    const dbids: number[] = [];
    for (let i = 0; i < 300; i += 1) {
      const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Nils Frahm', title: `Says ${i}`, comment: String(i % 10).repeat(BIG) });
      expect(res.status).toBe(200);
      dbids.push(dbidOf(res));
      peakUnsent = Math.max(peakUnsent, t.server.events.unsentBytes());
    }
    // svc dropped it; what the kernel already holds for it is still readable, then the end.
    expect(t.server.events.readerCount()).toBe(1);
    stalled.resume();
    await stalledClosed;
    // Per reader: at most 1 MiB queued before the next event closes it (one event past it at most).
    expect(peakUnsent).toBeLessThanOrEqual(2 * (1024 * 1024 + BIG * 2));
    while (reader.events.length < 300) await reader.next().then(() => undefined);
    expect(reader.events.map((event) => Number(event.id))).toEqual(dbids);
    reader.close();
  });

  test('When it stops reading while it catches up 300 large missed tracks, then the replay waits for it and holds only a piece', async () => {
    // docs/several-instances.md "Resuming streams": a replay writes on only as its reader takes it.
    const first = dbidOf(await postJson(`${t.url}/v1/remoteinput`, { artist: 'Before', title: 'Gap' }));
    for (let i = 0; i < 300; i += 1) {
      expect((await postJson(`${t.url}/v1/remoteinput`, { artist: 'Missed', title: `M${i}`, comment: String(i % 10).repeat(BIG) })).status).toBe(200);
    }
    const port = new URL(t.url).port;
    const stalled = net.connect(Number(port), '127.0.0.1');
    stalled.pause();
    stalled.on('error', () => undefined);
    await new Promise<void>((resolve) => stalled.once('connect', () => resolve()));
    stalled.write(`GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nLast-Event-ID: ${first}\r\n\r\n`);
    while (t.server.events.readerCount() < 1) await new Promise((resolve) => setImmediate(resolve));
    // The signal: its socket has stopped taking what was written (the kernel's buffers are full), so
    // the replay waits for it. What svc holds for it then is one piece (about 16 KiB plus one
    // record), far below the 300 records of 60 KB it asked for.
    await until(() => t.server.events.waitingReaders() === 1, 'the replay waits for the stalled reader');
    expect(t.server.events.unsentBytes()).toBeLessThanOrEqual(16 * 1024 + 2 * BIG + 1024);
    expect(t.server.events.readerCount()).toBe(1);
    stalled.destroy();
  });
});
