import fs from 'node:fs';
import { WebSocket } from 'ws';
import path from 'node:path';
import { killLeftovers, startCli } from '../cli/cli-process';
import { startMusicBrainzFake, type MusicBrainzFake } from '../fakes/musicbrainz';
import { asObject, postJson, request } from '../helpers/http';
import { startImageHost, type ImageHost } from '../helpers/image-host';
import { makePng } from '../helpers/images';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../helpers/postgres';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { makeTempDir } from '../helpers/temp-dir';
import { connectClient, type FrameClient } from '../helpers/ws-client';
import { eventually } from '../helpers/eventually';

// Several instances on one PostgreSQL database (docs/several-instances.md, docs/decisions.md
// "Several instances"): real `svc serve` processes sharing a database created for this run.

// A hang guard, not a goal: how fast a change crosses instances is bench/postgres.bench.js's fan-out row.
const HANG_GUARD_MS = 15_000;

const lastOf = async (instance: ServeProcess) => asObject((await request(`${instance.url}/v1/last`)).json);
const statusOf = async (instance: ServeProcess) => asObject((await request(`${instance.url}/v1/status`)).json);

describeWithPostgres('several instances on one PostgreSQL database', () => {
  let database: TestDatabase;
  let temp: ReturnType<typeof makeTempDir>;
  let imageHost: ImageHost;
  let instances: ServeProcess[];
  const serve = (url: string, extraArgs: string[] = []) => startServeProcess(['--port', '0', '--db', url, '--offline', ...extraArgs], {}, temp.dir);

  beforeAll(async () => {
    database = await createTestDatabase();
    temp = makeTempDir();
    // Covers come from a loopback image host in these tests.
    fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ coverFetch: { allowPrivateAddresses: true } }));
    imageHost = await startImageHost();
    // Three at once: the migrations must cope with that.
    instances = await Promise.all([1, 2, 3].map(() => serve(database.url)));
  });
  afterAll(async () => {
    for (const instance of instances ?? []) instance.child.kill('SIGKILL');
    await Promise.all((instances ?? []).map((instance) => instance.exited));
    await imageHost?.close();
    await database?.drop();
    temp?.cleanup();
  });
  afterEach(() => killLeftovers());

  const [a, b, c] = [0, 1, 2].map((index) => () => instances[index]);

  it('When a track is submitted through A, then /v1/last, /v1/images/ws, /wsstream and svc last --follow of B and C show it', async () => {
    expect((await postJson(`${a().url}/v1/remoteinput`, { artist: 'First', title: 'Before following' })).status).toBe(200);
    await eventually(
      () => lastOf(c()),
      (body) => body.artist === 'First',
      HANG_GUARD_MS,
    );
    const viewers: FrameClient[] = await Promise.all([b(), c()].map((instance) => connectClient(instance.url)));
    // /wsstream (What's Now Playing overlays): one JSON frame per track, current one first.
    const streamFrames: Record<string, unknown>[] = [];
    const stream = new WebSocket(`${c().url.replace(/^http/, 'ws')}/wsstream?session_id=multi&complete=0`);
    stream.on('message', (data: Buffer) => streamFrames.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>));
    await new Promise((resolve, reject) => stream.once('open', resolve).once('error', reject));
    const follow = startCli(['last', '--follow', '--url', c().url]);
    try {
      // Follow prints the current track once connected: then it is listening.
      expect(await follow.waitForLines(1, 5000)).toEqual(['First - Before following']);
      const res = await postJson(`${a().url}/v1/remoteinput`, { artist: 'Crossing', title: 'Instances' });
      expect(res.status).toBe(200);
      const { dbid } = asObject(res.json);
      for (const viewer of viewers) await viewer.waitFor((frame) => frame.type === 'track' && frame.dbid === dbid, { timeoutMs: HANG_GUARD_MS });
      for (const instance of [b(), c()]) {
        const last = await eventually(
          () => lastOf(instance),
          (body) => body.dbid === dbid,
          HANG_GUARD_MS,
        );
        expect(last).toMatchObject({ dbid, artist: 'Crossing', title: 'Instances' });
      }
      expect(await follow.waitForLines(2, HANG_GUARD_MS)).toEqual(['First - Before following', 'Crossing - Instances']);
      const streamed = await eventually(
        async () => streamFrames,
        (frames) => frames.some((frame) => frame.title === 'Instances'),
        HANG_GUARD_MS,
      );
      expect(streamed.map((frame) => frame.title)).toEqual(['Before following', 'Instances']);
    } finally {
      stream.close();
      for (const viewer of viewers) viewer.close();
      await follow.stop();
    }
  });

  it('When 90 submissions arrive at once spread over the three, then there are 90 distinct dbids, all stored, and every instance agrees on the current one', async () => {
    const before = Number((await database.query<{ n: string }>('SELECT count(*) AS n FROM tracks'))[0]?.n);
    const responses = await Promise.all(
      Array.from({ length: 90 }, (_, index) => postJson(`${instances[index % 3].url}/v1/remoteinput`, { artist: 'Load', title: `Song ${index}` })),
    );
    expect(responses.map((res) => res.status)).toEqual(Array.from({ length: 90 }, () => 200));
    const dbids = responses.map((res) => asObject(res.json).dbid as number);
    expect(new Set(dbids).size).toBe(90);
    const stored = await database.query<{ dbid: string }>('SELECT dbid FROM tracks WHERE dbid = ANY($1)', [dbids]);
    expect(stored).toHaveLength(90);
    // All in the history every instance serves.
    const history = asObject((await request(`${c().url}/v1/history?limit=1000`)).json);
    const listed = new Set((history.tracks as { dbid: number }[]).map((track) => track.dbid));
    expect(dbids.filter((dbid) => !listed.has(dbid))).toEqual([]);
    expect(Number((await database.query<{ n: string }>('SELECT count(*) AS n FROM tracks'))[0]?.n)).toBe(before + 90);
    // The current track is the highest stored dbid (docs/decisions.md "Delivery promises"), the same on every instance.
    const current = await database.query<{ dbid: string }>('SELECT dbid FROM tracks ORDER BY dbid DESC LIMIT 1');
    const expected = Number(current[0]?.dbid);
    for (const instance of instances) {
      expect(
        (
          await eventually(
            () => lastOf(instance),
            (body) => body.dbid === expected,
            HANG_GUARD_MS,
          )
        ).dbid,
      ).toBe(expected);
    }
  });

  it('When a cover is stored through A, then B serves it and C announces it', async () => {
    const png = makePng(8, 8, [10, 200, 30], [200, 10, 30]);
    imageHost.route('/shared-cover.png', (_req, res) => res.writeHead(200, { 'Content-Type': 'image/png' }).end(png));
    const viewer = await connectClient(c().url);
    try {
      const res = await postJson(`${a().url}/v1/remoteinput`, { artist: 'Cover', title: 'Shared', coverurl: `${imageHost.url}/shared-cover.png` });
      const body = asObject(res.json);
      const coverurl = asObject(body.processed_metadata).coverurl as string;
      expect(coverurl).toMatch(/^cover\/[0-9a-f]{64}$/);
      const served = await fetch(`${b().url}/${coverurl}`);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);
      // Title first (docs/title-first.md): the track is announced at once, then again with its cover.
      const track = await viewer.waitFor((frame) => frame.type === 'track' && frame.dbid === body.dbid && asObject(frame.track).coverurl !== undefined, {
        timeoutMs: HANG_GUARD_MS,
      });
      expect(asObject(track.track).coverurl).toBe(coverurl);
      await viewer.waitFor((frame) => frame.type === 'image' && frame.dbid === body.dbid && frame.category === 'cover' && frame.url === coverurl, {
        timeoutMs: HANG_GUARD_MS,
      });
    } finally {
      viewer.close();
    }
  });

  it('When the current track is deleted through B, then A and C fall back to the previous one, and their streams say so', async () => {
    const first = asObject((await postJson(`${a().url}/v1/remoteinput`, { artist: 'Keep', title: 'Me' })).json).dbid;
    const second = asObject((await postJson(`${a().url}/v1/remoteinput`, { artist: 'Delete', title: 'Me' })).json).dbid;
    await eventually(
      () => lastOf(c()),
      (body) => body.dbid === second,
      HANG_GUARD_MS,
    );
    const viewer = await connectClient(c().url);
    try {
      const from = viewer.frames.length;
      const deleted = await request(`${b().url}/v1/history/${String(second)}`, { method: 'DELETE' });
      expect(deleted.status).toBe(204);
      await viewer.waitFor((frame) => frame.type === 'track' && frame.dbid === first, { from, timeoutMs: HANG_GUARD_MS });
      for (const instance of [a(), c()])
        expect(
          (
            await eventually(
              () => lastOf(instance),
              (body) => body.dbid === first,
              HANG_GUARD_MS,
            )
          ).dbid,
        ).toBe(first);
      const history = asObject((await request(`${a().url}/v1/history?limit=5`)).json);
      expect((history.tracks as { dbid: number }[]).map((track) => track.dbid)).not.toContain(second);
    } finally {
      viewer.close();
    }
  });

  it('When the current play ends by its duration, then /v1/last of every instance shows the end within a few seconds, not at the next change', async () => {
    const answer = asObject((await postJson(`${b().url}/v1/remoteinput`, { artist: 'Timed', title: 'Ends alone', duration: 1 })).json);
    for (const instance of [a(), b(), c()]) {
      const last = await eventually(
        () => lastOf(instance),
        (body) => body.dbid === answer.dbid && body.ended_at !== null,
        5000,
      );
      expect(last).toMatchObject({ dbid: answer.dbid, end_reason: 'duration' });
    }
  });

  it('When A is killed with SIGKILL, then B and C keep serving and still hear each other', async () => {
    const viewer = await connectClient(c().url);
    try {
      a().child.kill('SIGKILL');
      await a().exited;
      const res = await postJson(`${b().url}/v1/remoteinput`, { artist: 'Survivor', title: 'After the kill' });
      expect(res.status).toBe(200);
      const { dbid } = asObject(res.json);
      await viewer.waitFor((frame) => frame.type === 'track' && frame.dbid === dbid, { timeoutMs: HANG_GUARD_MS });
      expect(
        (
          await eventually(
            () => lastOf(c()),
            (body) => body.dbid === dbid,
            HANG_GUARD_MS,
          )
        ).dbid,
      ).toBe(dbid);
      expect(await statusOf(b())).toMatchObject({ status: 'ok', database: 'ok' });
    } finally {
      viewer.close();
    }
  });

  describe('a database outage (a TCP proxy in front of PostgreSQL, cut and restored)', () => {
    let proxy: TcpProxy;
    let behindProxy: ServeProcess;
    beforeAll(async () => {
      proxy = await startTcpProxy(Number(new URL(database.url).port || 5432), new URL(database.url).hostname);
      const url = new URL(database.url);
      url.port = String(proxy.port);
      behindProxy = await serve(url.toString());
    });
    afterAll(async () => {
      behindProxy?.child.kill('SIGKILL');
      await behindProxy?.exited;
      await proxy?.close();
    });

    it('When the database is cut off, then reads and streams keep the last state, writes get 503 and nothing is stored; restored, it catches up by itself (track and images)', async () => {
      const before = await postJson(`${behindProxy.url}/v1/remoteinput`, { artist: 'Before', title: 'The outage' });
      expect(before.status).toBe(200);
      const beforeDbid = asObject(before.json).dbid;
      const viewer = await connectClient(behindProxy.url);
      try {
        const count = async () => Number((await database.query<{ n: string }>('SELECT count(*) AS n FROM tracks'))[0]?.n);
        const storedBefore = await count();
        proxy.cut();
        const status = await eventually(
          () => statusOf(behindProxy),
          (body) => body.database === 'unavailable',
          5000,
        );
        expect(status).toEqual(expect.objectContaining({ status: 'ok', database: 'unavailable' }));
        expect(await lastOf(behindProxy)).toMatchObject({ dbid: beforeDbid, artist: 'Before' });

        const refused = await postJson(`${behindProxy.url}/v1/remoteinput`, { artist: 'During', title: 'The outage' });
        expect(refused.status).toBe(503);
        expect(refused.json).toEqual({ error: 'Database unavailable' });
        expect(await count()).toBe(storedBefore);
        expect(viewer.socket.readyState).toBe(viewer.socket.OPEN);

        // Meanwhile another instance stores a track: the cut one must catch up on it.
        const cover = makePng(6, 6, [1, 2, 3], [200, 100, 50]);
        imageHost.route('/missed-cover.png', (_req, res) => res.writeHead(200, { 'Content-Type': 'image/png' }).end(cover));
        const missed = await postJson(`${b().url}/v1/remoteinput`, { artist: 'Missed', title: 'While cut off', coverurl: `${imageHost.url}/missed-cover.png` });
        const missedDbid = asObject(missed.json).dbid;

        proxy.restore();
        await viewer.waitFor((frame) => frame.type === 'track' && frame.dbid === missedDbid, { timeoutMs: 10_000 });
        // Its cover, linked while this instance was cut off, is announced after the catch-up too.
        await viewer.waitFor((frame) => frame.type === 'image' && frame.dbid === missedDbid && frame.category === 'cover', { timeoutMs: 5000 });
        expect(
          (
            await eventually(
              () => lastOf(behindProxy),
              (body) => body.dbid === missedDbid,
              1000,
            )
          ).dbid,
        ).toBe(missedDbid);
        expect(
          await eventually(
            () => statusOf(behindProxy),
            (body) => body.database === 'ok',
            5000,
          ),
        ).toMatchObject({ database: 'ok' });
        const after = await postJson(`${behindProxy.url}/v1/remoteinput`, { artist: 'After', title: 'The outage' });
        expect(after.status).toBe(200);
      } finally {
        viewer.close();
      }
    });
  });
});

describeWithPostgres('the MusicBrainz rate across instances', () => {
  let database: TestDatabase;
  let musicbrainz: MusicBrainzFake;
  let temp: ReturnType<typeof makeTempDir>;
  let instances: ServeProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    musicbrainz = await startMusicBrainzFake();
    temp = makeTempDir();
    const enrichment: Record<string, unknown> = {
      enabled: true,
      contact: 'https://example.org/svc-tests',
      deadlineSeconds: 6,
      musicbrainz: { enabled: true, baseUrl: musicbrainz.baseUrl },
    };
    for (const other of ['coverartarchive', 'wikidata', 'wikipedia', 'theaudiodb', 'fanarttv', 'acoustid']) enrichment[other] = { enabled: false };
    fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ enrichment }));
    instances = await Promise.all([1, 2].map(() => startServeProcess(['--port', '0', '--db', database.url], {}, temp.dir)));
  });
  afterAll(async () => {
    for (const instance of instances) instance.child.kill('SIGKILL');
    await Promise.all(instances.map((instance) => instance.exited));
    await musicbrainz?.close();
    await database?.drop();
    temp?.cleanup();
  });

  // The turn itself (one taker per interval, the next turn a full interval after the real start) is
  // the store contract's (test/unit/store/store-contract.test.ts "When two instances want the same
  // service"); here, on the database's own row, both processes obey it and pass it between them.
  it('When the MusicBrainz turn in the database is held, then neither instance asks MusicBrainz; when it is free, both take it in turn', async () => {
    const service = `musicbrainz ${new URL(musicbrainz.baseUrl).origin}`;
    // The test holds the turn for an hour, as a third instance that just started a request would.
    await database.query(
      'INSERT INTO request_slots (service, next_at) VALUES ($1, (extract(epoch from clock_timestamp()) * 1000)::bigint + 3600000) ON CONFLICT (service) DO UPDATE SET next_at = EXCLUDED.next_at',
      [service],
    );
    const submit = (from: number, count: number) =>
      Promise.all(
        Array.from({ length: count }, (_, index) =>
          postJson(`${instances[(from + index) % 2].url}/v1/remoteinput`, { artist: `Artist ${from + index}`, title: `Song ${from + index}` }),
        ),
      );
    // Each answer comes once its enrichment gave up at the deadline: by then no lookup went out.
    for (const res of await submit(0, 8)) expect(res.status).toBe(200);
    expect(musicbrainz.calls()).toEqual([]);

    await database.query('UPDATE request_slots SET next_at = 0 WHERE service = $1', [service]);
    for (const res of await submit(8, 2)) expect(res.status).toBe(200);
    // Both instances got their turn (Artist 8 from the first, Artist 9 from the second), within MusicBrainz's rate.
    const asked = musicbrainz.calls().map((call) => JSON.stringify(call.query));
    expect(asked.some((query) => query.includes('Artist 8'))).toBe(true);
    expect(asked.some((query) => query.includes('Artist 9'))).toBe(true);
    expect(musicbrainz.refusals()).toEqual([]);
    // The only turn is that one row: both instances took it from there.
    expect(await database.query('SELECT service FROM request_slots')).toEqual([{ service }]);
  });
});
