import { enrichmentConfig, startFakeServices, type FakeServices } from '../fakes/services';
import { postJson } from '../helpers/http';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { until } from '../helpers/eventually';
import { ManualLimiterClock } from '../helpers/limiter-clock';

// Courtesy (docs/enrichment.md, its "Courtesy" paragraph): at most one MusicBrainz request per
// second for the whole process, through one queue shared by all concurrent submissions. The queue
// runs on a manual clock (test/helpers/limiter-clock.ts), MusicBrainz the only spaced service
// enabled, so every wait on that clock is MusicBrainz's: the test moves the clock to each turn and
// reads the spacing svc kept off the clock, never off a stopwatch. The deadline (real, 2 s) bounds the run.

const TURNS = 4;

describe('MusicBrainz rate limit', () => {
  let fakes: FakeServices;
  let server: TestServer;
  const clock = new ManualLimiterClock();

  beforeAll(async () => {
    fakes = await startFakeServices();
    const others = { coverartarchive: { enabled: false }, theaudiodb: { enabled: false }, fanarttv: { enabled: false }, acoustid: { enabled: false } };
    server = await startTestServer({ config: enrichmentConfig(fakes, { deadlineSeconds: 2, ...others }), enrichmentClock: clock });
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  it('When 20 different submissions run concurrently, then MusicBrainz requests start at least 1 s apart, and waiting ones leave at the deadline', async () => {
    const calls = () => fakes.musicbrainz.calls().length;
    const answers = Promise.all(
      Array.from({ length: 20 }, (_, index) => postJson(`${server.url}/v1/remoteinput`, { artist: `Artist ${index}`, title: `Song ${index}` })),
    );
    // The first goes at once; each next one when the clock reaches the turn the limiter set.
    await until(() => calls() === 1 && clock.dueTimes().length > 0, 'the first request went and the next waits its turn');
    const gaps: number[] = [];
    let previous = clock.now();
    for (let turn = 1; turn <= TURNS; turn += 1) {
      const due = clock.dueTimes()[0] ?? Number.NaN;
      await clock.advance(due - clock.now());
      await until(() => calls() === turn + 1 && clock.dueTimes().length > 0, `request ${turn + 1} went at its turn`);
      gaps.push(due - previous);
      previous = due;
    }
    expect(gaps).toHaveLength(TURNS);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1000);

    // The rest wait for turns the clock never reaches: the deadline answers them, unenriched.
    for (const response of await answers) expect(response.status).toBe(200);
    // Submissions that gave up at the deadline left the queue: no request is sent for them later.
    // The marker: one more submission queues behind anything left, so its lookup comes next.
    const seen = calls();
    const marker = postJson(`${server.url}/v1/remoteinput`, { artist: 'Marker', title: 'Last' });
    await until(() => calls() > seen || clock.dueTimes().length > 0, 'the marker asked or waits its turn');
    if (calls() === seen) await clock.advance((clock.dueTimes()[0] ?? 0) - clock.now());
    expect((await marker).status).toBe(200);
    const after = fakes.musicbrainz.calls().slice(seen);
    expect(after.length).toBeGreaterThan(0);
    expect(JSON.stringify(after)).toContain('Marker');
    expect(JSON.stringify(after)).not.toMatch(/Artist \d/);
  });
});
