import { enrichmentConfig, startFakeServices, type FakeServices } from '../fakes/services';
import { postJson } from '../helpers/http';
import { startTestServer, type TestServer } from '../helpers/test-server';

// Courtesy (docs/enrichment.md, its "Courtesy" paragraph): at most one MusicBrainz request per
// second for the whole process, through one queue shared by all concurrent submissions. Real 1 s
// interval; the deadline bounds the run.

describe('MusicBrainz rate limit', () => {
  let fakes: FakeServices;
  let server: TestServer;

  beforeAll(async () => {
    fakes = await startFakeServices();
    server = await startTestServer({ config: enrichmentConfig(fakes, { deadlineSeconds: 8 }) });
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  it('When 20 different submissions run concurrently, then MusicBrainz requests start at least 1 s apart, and waiting ones leave at the deadline', async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) => postJson(`${server.url}/v1/remoteinput`, { artist: `Artist ${index}`, title: `Song ${index}` })),
    );
    for (const response of responses) expect(response.status).toBe(200);

    const arrivals = fakes.musicbrainz.calls().map((call) => call.at);
    // In 8 s at 1 per second: the first at once, then about one a second (fewer on a loaded machine;
    // the spacing below is the rule under test, the count only shows the queue kept moving).
    expect(arrivals.length).toBeGreaterThanOrEqual(4);
    expect(arrivals.length).toBeLessThanOrEqual(9);
    for (let i = 1; i < arrivals.length; i += 1) expect((arrivals[i] ?? 0) - (arrivals[i - 1] ?? 0)).toBeGreaterThanOrEqual(1000);

    // Submissions that gave up at the deadline left the queue: no request is sent for them later.
    // The marker: one more submission queues behind anything left, so its lookup comes next.
    const seen = arrivals.length;
    expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Marker', title: 'Last' })).status).toBe(200);
    const calls = fakes.musicbrainz.calls();
    expect(calls.length).toBeGreaterThan(seen);
    expect(JSON.stringify(calls.slice(seen))).toContain('Marker');
    expect(JSON.stringify(calls.slice(seen))).not.toMatch(/Artist \d/);
  });
});
