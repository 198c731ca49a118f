import pg from 'pg';
import { enrichmentConfig, startFakeServices, type FakeServices } from '../fakes/services';
import { TEARDROP } from '../fixtures/ids';
import { delayingEnricher } from '../helpers/enrichers';
import { asObject, postJson, request } from '../helpers/http';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../helpers/postgres';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { stampedReader } from '../helpers/stamped-frames';
import { storedCount } from '../helpers/stored-count';
import { withoutPlayFields } from '../helpers/play-fields';

// Title first across instances sharing PostgreSQL, and the 408 of a stuck store
// (docs/title-first.md "The 408").

const FAKE_LATENCY_MS = 400;
const wsBase = (url: string) => url.replace(/^http/, 'ws');

describeWithPostgres('Title first on PostgreSQL', () => {
  let database: TestDatabase;
  const servers: TestServer[] = [];
  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
    await database.drop();
  });

  it('When a track is submitted through instance A, then a stream of instance B shows the bare title before any service answered, B’s /v1/last has the POST’s dbid, and B announces the enriched update', async () => {
    const fakes: FakeServices = await startFakeServices();
    try {
      fakes.slowDown(FAKE_LATENCY_MS);
      const config = { ...enrichmentConfig(fakes), database: { location: database.url } };
      const a = await startTestServer({ config });
      servers.push(a);
      const b = await startTestServer({ config });
      servers.push(b);
      const push = await stampedReader(`${wsBase(b.url)}/v1/images/ws`, true);
      const stream = await stampedReader(`${wsBase(b.url)}/wsstream?complete=0`, false);
      try {
        const postedAt = performance.now();
        const answer = postJson(`${a.url}/v1/remoteinput`, { artist: 'Massive Attack', title: 'Teardrop' });
        const bare = await push.waitFor((frame) => frame.type === 'track');
        await stream.waitFor((frame) => frame.title === 'Teardrop');
        expect(withoutPlayFields(bare.frame.track)).toEqual({ dbid: bare.frame.dbid, artist: 'Massive Attack', title: 'Teardrop' });
        // Before any outside service could answer (the 50 ms goal is measured in bench/, not asserted here).
        const firstAnswerAt = Math.min(...fakes.all().map((call) => call.at)) + FAKE_LATENCY_MS - performance.timeOrigin;
        expect(bare.at).toBeLessThan(firstAnswerAt);
        expect(bare.at).toBeGreaterThan(postedAt);
        expect(asObject((await request(`${b.url}/v1/last`)).json).dbid).toBe(bare.frame.dbid);

        const result = asObject((await answer).json);
        expect(result.dbid).toBe(bare.frame.dbid);
        const update = await push.waitFor((frame) => frame.type === 'track' && asObject(frame.track).musicbrainzrecordingid === TEARDROP);
        expect(update.frame.dbid).toBe(result.dbid);
        await stream.waitFor((frame) => frame.musicbrainzrecordingid === TEARDROP);
      } finally {
        push.close();
        stream.close();
      }
    } finally {
      await fakes.close();
    }
  });

  it('When the store gets stuck while a record is enriched, then the POST answers 408, the previous track is current again and announced, and the record is deleted once the store moves', async () => {
    const enricher = delayingEnricher(() => 500, { genre: 'Found' });
    const t = await startTestServer({
      config: { database: { location: database.url }, processingTimeoutSeconds: 2, enrichment: { deadlineSeconds: 1 } },
      plan: [[enricher]],
    });
    servers.push(t);
    const previous = asObject((await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Previous' })).json);
    const push = await stampedReader(`${wsBase(t.url)}/v1/images/ws`, true);
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await push.waitFor((frame) => frame.type === 'track' && frame.dbid === previous.dbid);
      const answer = postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Stuck' });
      const bare = await push.waitFor((frame) => frame.type === 'track' && asObject(frame.track).title === 'Stuck');
      // The store gets stuck for this record: its row is locked before enrichment writes to it.
      await locker.query('BEGIN');
      await locker.query('SELECT dbid FROM tracks WHERE dbid = $1 FOR UPDATE', [bare.frame.dbid]);
      const from = push.frames.length;

      const res = await answer;
      expect(res.status).toBe(408);
      const back = await push.waitFor((frame) => frame.type === 'track', from);
      expect(back.frame.dbid).toBe(previous.dbid);
      expect(asObject((await request(`${t.url}/v1/last`)).json)).toMatchObject({ dbid: previous.dbid, title: 'Previous' });

      await locker.query('ROLLBACK');
      for (let tries = 0; (await t.server.tracks.byDbid(bare.frame.dbid as number)) !== null; tries += 1) {
        if (tries > 200) throw new Error('the timed-out record was never deleted');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(await storedCount(t.server.tracks)).toBe(1);
      expect(asObject((await request(`${t.url}/v1/last`)).json).dbid).toBe(previous.dbid);
      // Nothing announced the stuck record again once the store moved.
      expect(push.frames.slice(from).every((entry) => entry.frame.dbid === previous.dbid)).toBe(true);
    } finally {
      await locker.end();
      push.close();
    }
  });
});
