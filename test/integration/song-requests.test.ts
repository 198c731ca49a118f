import { createHash } from 'node:crypto';
import { MAX_WAITING_PER_REQUESTER } from '../../src/domain/song-request';
import { eventually } from '../helpers/eventually';
import { asObject, postJson, request } from '../helpers/http';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../helpers/postgres';
import { openSse } from '../helpers/sse-client';
import { startTestServer, type TestServer } from '../helpers/test-server';

// The song-request queue API (docs/song-requests.md), held to What's Now Playing's own request
// tests (whatsnowplaying/whats-now-playing tests/webserver/test_webserver_requests.py on its main
// branch) restated as HTTP calls: enqueue and list, auth by header and by body, auth on GET and
// DELETE, disabled, delete by id and clear, delete by identity, partial identity 400, no match 404.
// Its handlers (nowplaying/webserver/requests_handlers.py) and queue (nowplaying/trackrequests.py)
// give the rest: track_id, the 30 s dedupe per requester, and fulfilment on play.

const WNP_AUTH = 'X-WNP-Client-Auth';

interface Item {
  request_id: number;
  track_id: string;
  title: string | null;
  artist: string | null;
  requester: string;
  request_origin: string;
  user_platform: string | null;
  external_id: string | null;
  timestamp: string;
}

async function queue(url: string, headers: Record<string, string> = {}): Promise<Item[]> {
  const answer = await request(`${url}/v1/requests`, { headers });
  expect(answer.status).toBe(200);
  return asObject(answer.json).requests as Item[];
}

const del = (url: string, headers: Record<string, string> = {}) => request(url, { method: 'DELETE', headers });

describe('Song requests: What’s Now Playing’s queue API', () => {
  let server: TestServer;
  afterEach(async () => {
    await server.close();
  });

  it('When a Lumia request is posted, then it is accepted with a track_id and listed with its origin, platform and requester (test_requests_enqueue_and_list)', async () => {
    server = await startTestServer();
    expect((await del(`${server.url}/v1/requests`)).status).toBe(200);
    const posted = await postJson(`${server.url}/v1/requests`, {
      requester: 'viewer1',
      user_platform: 'kick',
      artist: 'Radiohead',
      title: 'Creep',
      external_id: 'lumia-7',
    });
    expect(posted.status).toBe(200);
    const answer = asObject(posted.json);
    expect(answer.accepted).toBe(true);
    expect(answer.deduped).toBe(false);
    // sha256 of the normalised "artist|title", as What's Now Playing derives it.
    expect(answer.track_id).toBe(createHash('sha256').update('radiohead|creep').digest('hex'));
    const items = await queue(server.url);
    const creep = items.find((item) => item.title === 'Creep');
    expect(creep).toMatchObject({ request_origin: 'lumia', user_platform: 'kick', requester: 'viewer1', artist: 'Radiohead', external_id: 'lumia-7' });
    expect(Number.isNaN(Date.parse(creep?.timestamp ?? ''))).toBe(false);
  });

  it.each([
    [undefined, undefined, undefined, 200],
    ['test_secret', 'test_secret', 'header', 200],
    ['test_secret', 'wrong_secret', 'header', 403],
    ['test_secret', 'test_secret', 'body', 200],
    ['test_secret', 'wrong_secret', 'body', 403],
    ['test_secret', undefined, undefined, 403],
  ] as const)(
    'When the secret is %s and the request sends %s in its %s, then POST answers %d (test_requests_authentication)',
    async (secret, sent, where, status) => {
      server = await startTestServer({ config: secret === undefined ? {} : { secret } });
      const body: Record<string, string> = { requester: 'viewer1', artist: 'Radiohead', title: 'Creep' };
      const headers: Record<string, string> = {};
      if (sent !== undefined && where === 'header') headers[WNP_AUTH] = sent;
      if (sent !== undefined && where === 'body') body.secret = sent;
      expect((await postJson(`${server.url}/v1/requests`, body, headers)).status).toBe(status);
    },
  );

  it('When a secret is set, then GET and DELETE need it too, in the header, and an unknown id is then a genuine 404 (test_requests_header_auth_avoids_query_string)', async () => {
    server = await startTestServer({ config: { secret: 'test_secret' } });
    const auth = { [WNP_AUTH]: 'test_secret' };
    expect((await request(`${server.url}/v1/requests`)).status).toBe(403);
    expect((await request(`${server.url}/v1/requests`, { headers: auth })).status).toBe(200);
    expect((await del(`${server.url}/v1/requests`, auth)).status).toBe(200);
    expect((await del(`${server.url}/v1/requests/999999`, auth)).status).toBe(404);
    expect((await del(`${server.url}/v1/requests/999999`)).status).toBe(403);
  });

  it('When requests are disabled, then POST and DELETE are refused with 403 and GET reads an empty queue (test_requests_disabled)', async () => {
    server = await startTestServer({ config: { requests: { enabled: false } } });
    const posted = await postJson(`${server.url}/v1/requests`, { requester: 'viewer1', artist: 'Radiohead', title: 'Creep' });
    expect(posted.status).toBe(403);
    expect(asObject(posted.json).error).toBe('Requests are disabled');
    expect((await del(`${server.url}/v1/requests`)).status).toBe(403);
    expect(await queue(server.url)).toEqual([]);
  });

  it('When one request is deleted by id, then one is left; a clear then empties the queue (test_requests_delete_and_clear)', async () => {
    server = await startTestServer();
    expect((await del(`${server.url}/v1/requests`)).status).toBe(200);
    for (const [artist, title] of [
      ['Radiohead', 'Creep'],
      ['Nirvana', 'Breed'],
    ]) {
      expect((await postJson(`${server.url}/v1/requests`, { requester: 'viewer1', artist, title })).status).toBe(200);
    }
    const items = await queue(server.url);
    expect(items.map((item) => item.title)).toEqual(['Creep', 'Breed']);
    const victim = items[0]?.request_id;
    const deleted = await del(`${server.url}/v1/requests/${victim}`);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ deleted: 1, request_id: victim });
    expect(await queue(server.url)).toHaveLength(1);
    const cleared = await del(`${server.url}/v1/requests`);
    expect(cleared.status).toBe(200);
    expect(cleared.json).toEqual({ cleared: true });
    expect(await queue(server.url)).toEqual([]);
  });

  it('When artist, title and requester are given to DELETE, then only that requester’s request goes (test_requests_delete_by_identity)', async () => {
    server = await startTestServer();
    for (const requester of ['viewer1', 'viewer2']) {
      expect((await postJson(`${server.url}/v1/requests`, { requester, artist: 'Radiohead', title: 'Creep' })).status).toBe(200);
    }
    const deleted = await del(`${server.url}/v1/requests?${new URLSearchParams({ artist: 'Radiohead', title: 'Creep', requester: 'viewer1' }).toString()}`);
    expect(deleted.status).toBe(200);
    expect(asObject(deleted.json).deleted).toBe(1);
    const items = await queue(server.url);
    expect(items.map((item) => item.requester)).toEqual(['viewer2']);
  });

  it('When DELETE names a requester without artist and title, then it is a 400 and nothing is removed, never a clear-all (test_requests_delete_partial_identity_rejected)', async () => {
    server = await startTestServer();
    expect((await postJson(`${server.url}/v1/requests`, { requester: 'viewer1', artist: 'Radiohead', title: 'Creep' })).status).toBe(200);
    for (const partial of ['requester=viewer1', 'artist=Radiohead', 'title=Creep']) {
      expect((await del(`${server.url}/v1/requests?${partial}`)).status).toBe(400);
    }
    expect(await queue(server.url)).toHaveLength(1);
  });

  it('When nothing matches a DELETE, by identity or by id, then it is a 404, not a silent deleted: 0 (test_requests_delete_no_match_404)', async () => {
    server = await startTestServer();
    expect((await del(`${server.url}/v1/requests?artist=Nobody&title=Nothing&requester=ghost`)).status).toBe(404);
    expect((await del(`${server.url}/v1/requests/999999`)).status).toBe(404);
    expect((await del(`${server.url}/v1/requests/not-a-number`)).status).toBe(400);
  });

  // Issue 54 M5: one requester filled the 1,000-request queue in 2.3 s.
  it('When one requester floods the queue, then past MAX_WAITING_PER_REQUESTER it is a 429 naming the bound, logged with the requester, and another viewer is still queued', async () => {
    server = await startTestServer();
    for (let index = 0; index < MAX_WAITING_PER_REQUESTER; index++) {
      expect((await postJson(`${server.url}/v1/requests`, { requester: 'flood', artist: 'Artist', title: `Song ${index}` })).status).toBe(200);
    }
    const refused = await postJson(`${server.url}/v1/requests`, { requester: 'flood', artist: 'Artist', title: 'One more' });
    expect(refused.status).toBe(429);
    expect(asObject(refused.json).error).toBe('Too many requests from this requester are waiting');
    expect(server.logs.some((line) => line.includes('requester "flood" has too many requests waiting'))).toBe(true);
    expect((await postJson(`${server.url}/v1/requests`, { requester: 'viewer', artist: 'Artist', title: 'One more' })).status).toBe(200);
    expect((await queue(server.url)).filter((item) => item.requester === 'flood')).toHaveLength(MAX_WAITING_PER_REQUESTER);
  });

  it('When one requester asks for the same track twice within 30 s, then the second is deduped; another requester’s is queued', async () => {
    server = await startTestServer();
    const first = asObject((await postJson(`${server.url}/v1/requests`, { requester: 'viewer1', artist: 'Radiohead', title: 'Creep' })).json);
    const again = await postJson(`${server.url}/v1/requests`, { requester: 'viewer1', artist: 'RADIOHEAD', title: 'creep!' });
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ accepted: true, deduped: true, track_id: first.track_id, request_id: first.request_id });
    expect(asObject((await postJson(`${server.url}/v1/requests`, { requester: 'viewer2', artist: 'Radiohead', title: 'Creep' })).json).deduped).toBe(false);
    expect(await queue(server.url)).toHaveLength(2);
  });

  it('When a request comes as a chat query, then it is read as artist and title; an empty one or one without requester is a 400', async () => {
    server = await startTestServer();
    const answer = asObject((await postJson(`${server.url}/v1/requests`, { requester: 'viewer1', query: 'Nirvana - "Breed" for @dj' })).json);
    expect(answer).toMatchObject({ accepted: true, requestartist: 'Nirvana', requesttitle: 'Breed', requestedfor: 'dj' });
    const empty = await postJson(`${server.url}/v1/requests`, { requester: 'viewer1' });
    expect(empty.status).toBe(400);
    expect(asObject(empty.json)).toMatchObject({ accepted: false, reason: 'empty request' });
    const nobody = await postJson(`${server.url}/v1/requests`, { artist: 'Radiohead', title: 'Creep' });
    expect(nobody.status).toBe(400);
    expect(asObject(nobody.json).error).toBe('requester is required');
  });

  it('When matching tracks play, then their requests are fulfilled and removed: exact, normalised, fuzzy; request events go out on /v1/events', async () => {
    server = await startTestServer({ config: { dedupeSeconds: 0 } });
    const events = await openSse(`${server.url}/v1/events`);
    try {
      for (const [requester, artist, title] of [
        ['a', 'Radiohead', 'Creep'],
        ['b', 'Sigur Rós', 'Hoppípolla'],
        ['c', 'Massive Attack', 'Teardrop'],
        ['d', 'Nobody Played', 'This'],
      ]) {
        await postJson(`${server.url}/v1/requests`, { requester, artist, title });
      }
      const ofKind = (kind: string) => events.events.filter((event) => event.event === kind);
      await eventually(
        async () => ofKind('request.added').length,
        (count) => count === 4,
      );
      expect(ofKind('request.added')).toHaveLength(4);
      const requesters = async () => (await queue(server.url)).map((item) => item.requester).join(',');
      for (const [artist, title, left] of [
        ['Radiohead', 'Creep', 'b,c,d'],
        ['SIGUR ROS', 'Hoppipolla', 'c,d'],
        ['Massive Atack', 'Teardrop', 'd'],
      ]) {
        const played = asObject((await postJson(`${server.url}/v1/remoteinput`, { artist, title })).json);
        expect(await eventually(requesters, (now) => now === left)).toBe(left);
        // The track names who asked for it (What's Now Playing's `requester` field), in the answer and on /v1/last.
        expect(asObject(played.processed_metadata).requester).toBeDefined();
      }
      await postJson(`${server.url}/v1/remoteinput`, { artist: 'Someone Else', title: 'Entirely' });
      await eventually(
        async () => ofKind('track').length,
        (count) => count === 4,
      );
      const removed = ofKind('request.removed').map((event) => asObject(JSON.parse(event.data)));
      expect(removed.map((event) => [event.requester, event.reason])).toEqual([
        ['a', 'fulfilled'],
        ['b', 'fulfilled'],
        ['c', 'fulfilled'],
      ]);
      expect(removed.every((event) => event.id === undefined && typeof event.dbid === 'number')).toBe(true);
      expect(asObject((await request(`${server.url}/v1/last`)).json).requester).toBeUndefined();
      const history = asObject((await request(`${server.url}/v1/history`)).json).tracks as Record<string, unknown>[];
      expect(history.map((track) => track.requester)).toEqual([undefined, 'c', 'b', 'a']);
      expect(await queue(server.url)).toHaveLength(1);
    } finally {
      events.close();
    }
  });

  it('When the server restarts on its SQLite file, then the queue is still there', async () => {
    server = await startTestServer();
    await postJson(`${server.url}/v1/requests`, { requester: 'viewer1', artist: 'Radiohead', title: 'Creep' });
    await server.restart();
    expect((await queue(server.url)).map((item) => [item.requester, item.title])).toEqual([['viewer1', 'Creep']]);
  });

  it('When the Lumia plugin shakes hands, then a plugin of 1.0.0 or later is accepted and an older one is refused with a message', async () => {
    server = await startTestServer();
    expect(asObject((await request(`${server.url}/v1/lumia/version?plugin_version=1.2.0`)).json)).toMatchObject({
      accepted: true,
      min_plugin_version: '1.0.0',
    });
    const old = asObject((await request(`${server.url}/v1/lumia/version?plugin_version=0.9`)).json);
    expect(old.accepted).toBe(false);
    expect(old.message).toMatch(/too old/);
    expect(asObject((await request(`${server.url}/v1/lumia/version`)).json).accepted).toBe(false);
  });
});

describeWithPostgres('Song requests on PostgreSQL', () => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await database.drop();
  });

  it('When a request is queued through one instance and svc restarts, then the queue is still there, and another instance dedupes and lists the same queue', async () => {
    const config = { database: { location: database.url } };
    const a = await startTestServer({ config });
    const b = await startTestServer({ config });
    try {
      const first = asObject((await postJson(`${a.url}/v1/requests`, { requester: 'viewer1', artist: 'Radiohead', title: 'Creep' })).json);
      expect(asObject((await postJson(`${b.url}/v1/requests`, { requester: 'viewer1', artist: 'Radiohead', title: 'Creep' })).json)).toMatchObject({
        deduped: true,
        request_id: first.request_id,
      });
      await a.restart();
      expect((await queue(a.url)).map((item) => [item.request_id, item.requester, item.title])).toEqual([[first.request_id, 'viewer1', 'Creep']]);
      expect(await queue(b.url)).toHaveLength(1);
      expect((await del(`${b.url}/v1/requests/${String(first.request_id)}`)).status).toBe(200);
      expect(await queue(a.url)).toEqual([]);
    } finally {
      await b.close();
      await a.close();
    }
  });
});
