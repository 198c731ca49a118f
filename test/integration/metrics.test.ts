import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { deepMerge } from '../../src/domain/plain-object';
import { enrichmentConfig, startFakeServices } from '../fakes/services';
import { postJson, request } from '../helpers/http';
import { rawRequest } from '../helpers/raw-http';
import { until } from '../helpers/eventually';
import { peersForPart } from '../helpers/peers';
import { makeTempDir } from '../helpers/temp-dir';
import { startTestServer, type TestServer } from '../helpers/test-server';

// docs/running.md "Metrics": GET /metrics after a known workload, each counter equal to it, the
// text accepted by `promtool check metrics` (Debian prometheus); off unless configured; behind the
// secret with metrics.requireSecret.

const SUBMITTED = 4;
const REFUSED = 2;
const STATUS_READS = 3;

/** A delivery target on loopback: `/ok` answers 200, `/down` 500; counts what reached it. */
async function startTarget(): Promise<{ url: string; hits: Map<string, number>; close(): Promise<void> }> {
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const route = (req.url ?? '').split('?')[0] ?? '';
    hits.set(route, (hits.get(route) ?? 0) + 1);
    req.resume();
    res.statusCode = route === '/ok' ? 200 : 500;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The value of one sample line `name{labels} value`, labels in the order prom-client writes them. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const inner = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .join(',');
  const line = text.split('\n').find((entry) => entry.startsWith(`${name}{${inner}} `) || (inner === '' && entry.startsWith(`${name} `)));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('GET /metrics', () => {
  // Asked here, not in the test: a missing promtool is a skipped test of its own (test/helpers/peers.ts).
  const promtoolPresent = peersForPart(['promtool'], 'promtool check metrics on the scrape');
  const temp = makeTempDir();
  let target: Awaited<ReturnType<typeof startTarget>>;
  let server: TestServer;
  beforeAll(async () => {
    target = await startTarget();
    server = await startTestServer({
      dbFile: path.join(temp.dir, 'svc.db'),
      config: {
        metrics: { enabled: true },
        outputs: [
          { name: 'up', type: 'url', url: `${target.url}/ok?t={{title}}`, delay: 0 },
          { name: 'down', type: 'url', url: `${target.url}/down?t={{title}}`, delay: 0 },
        ],
      },
      outputPollMs: 20,
      outputMaxAttempts: 1,
    });
  });
  afterAll(async () => {
    await server?.close();
    await target?.close();
    temp.cleanup();
  });

  it('When a known workload ran, then each counter equals it, and promtool check metrics accepts the text', async () => {
    for (let i = 1; i <= SUBMITTED; i += 1) {
      expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Metric', title: `Track ${i}` })).status).toBe(200);
      // One track at a time reaches both targets: none is superseded by the next.
      await until(() => (target.hits.get('/ok') ?? 0) === i && (target.hits.get('/down') ?? 0) === i, `track ${i} delivered`);
    }
    for (let i = 0; i < REFUSED; i += 1) expect((await postJson(`${server.url}/v1/remoteinput`, { album: 'no artist, no title' })).status).toBe(400);
    for (let i = 0; i < STATUS_READS; i += 1) expect((await request(`${server.url}/v1/status`)).status).toBe(200);
    const events = new AbortController();
    const stream = await fetch(`${server.url}/v1/events`, { signal: events.signal });
    expect(stream.status).toBe(200);
    // The last failed attempt is stored before it is counted as gone: wait for the outputs' status to show it.
    await until(async () => {
      const status = (await request(`${server.url}/v1/outputs`)).json as { outputs: { pending: number }[] };
      return status.outputs.every((output) => output.pending === 0);
    }, 'both queues empty');

    const scrape = await request(`${server.url}/metrics`);
    events.abort();
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = scrape.text;
    expect(sample(text, 'svc_submissions_total', { outcome: 'stored' })).toBe(SUBMITTED);
    expect(sample(text, 'svc_submissions_total', { outcome: 'NO_IDENTIFYING_FIELD' })).toBe(REFUSED);
    expect(sample(text, 'svc_http_requests_total', { route: '/v1/remoteinput', method: 'POST', status: '200' })).toBe(SUBMITTED);
    expect(sample(text, 'svc_http_requests_total', { route: '/v1/remoteinput', method: 'POST', status: '400' })).toBe(REFUSED);
    expect(sample(text, 'svc_http_requests_total', { route: '/v1/status', method: 'GET', status: '200' })).toBe(STATUS_READS);
    expect(sample(text, 'svc_output_attempts_total', { output: 'up', outcome: 'delivered' })).toBe(SUBMITTED);
    expect(sample(text, 'svc_output_attempts_total', { output: 'down', outcome: 'failed' })).toBe(SUBMITTED);
    expect(sample(text, 'svc_output_queue_length', { output: 'up' })).toBe(0);
    expect(sample(text, 'svc_output_superseded', { output: 'up' })).toBe(0);
    expect(sample(text, 'svc_stream_clients', { kind: 'events' })).toBe(1);
    expect(sample(text, 'svc_stream_clients', { kind: 'images-ws' })).toBe(0);
    expect(sample(text, 'nodejs_eventloop_lag_seconds', {})).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'process_resident_memory_bytes', {})).toBeGreaterThan(0);

    if (promtoolPresent) {
      const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 60_000 });
      expect([check.status, check.stdout, check.stderr]).toEqual([0, '', '']);
    }
  });

  it('When a path svc does not serve is asked for, then it is counted as route "other", not by its name', async () => {
    await request(`${server.url}/no-such-page-${Date.now()}`);
    const text = (await request(`${server.url}/metrics`)).text;
    expect(text).not.toMatch(/no-such-page/);
    expect(sample(text, 'svc_http_requests_total', { route: 'other', method: 'GET', status: '404' })).toBeGreaterThanOrEqual(1);
  });
});

describe('GET /metrics when not configured, and behind the secret', () => {
  const temp = makeTempDir();
  afterAll(() => temp.cleanup());

  it('When metrics.enabled is not set, then /metrics is 404', async () => {
    const server = await startTestServer({ dbFile: path.join(temp.dir, 'off.db') });
    try {
      expect((await request(`${server.url}/metrics`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('When metrics.requireSecret is set, then a scrape without the secret is refused and Authorization: Bearer opens it', async () => {
    const server = await startTestServer({
      dbFile: path.join(temp.dir, 'secret.db'),
      config: { secret: 'scrape-me', metrics: { enabled: true, requireSecret: true } },
    });
    try {
      expect((await request(`${server.url}/metrics`)).status).toBe(403);
      expect((await request(`${server.url}/metrics`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(403);
      const allowed = await request(`${server.url}/metrics`, { headers: { Authorization: 'Bearer scrape-me' } });
      expect(allowed.status).toBe(200);
      expect(allowed.text).toContain('# TYPE svc_http_requests_total counter');
    } finally {
      await server.close();
    }
  });
});

describe('GET /metrics: enrichment lookups and listeners', () => {
  const temp = makeTempDir();
  afterAll(() => temp.cleanup());

  it('When a track is enriched and listeners join, then the lookups, failures and listeners counted are those that happened', async () => {
    const fakes = await startFakeServices();
    const secret = 'metrics-listeners';
    const server = await startTestServer({
      dbFile: path.join(temp.dir, 'enriched.db'),
      config: deepMerge(enrichmentConfig(fakes), {
        secret,
        metrics: { enabled: true },
        // Wikidata answers nothing: a closed port on loopback, so every lookup there fails.
        enrichment: { wikidata: { baseUrl: 'http://127.0.0.1:9/w/api.php' } },
        playlog: { icecast: [{ url: 'http://localhost:8000', mounts: { '/live': 'main' } }] },
      }),
    });
    try {
      const answer = await postJson(`${server.url}/v1/remoteinput`, { artist: 'Massive Attack', title: 'Teardrop' }, { 'X-SVC-Client-Auth': secret });
      expect(answer.status).toBe(200);
      await server.server.images.idle();
      for (const client of [1, 2, 3]) {
        const joined = await rawRequest(`${server.url}/v1/icecast/listeners`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-SVC-Client-Auth': secret },
          body: `action=listener_add&server=localhost&port=8000&client=${client}&mount=%2Flive&ip=192.0.2.${client}&agent=metrics`,
        });
        expect(joined.status).toBe(200);
      }
      // Enrichment ends on its own time: scrape until the failed Wikidata lookups are all counted.
      let text = '';
      await until(async () => {
        text = (await request(`${server.url}/metrics`)).text;
        const asked = sample(text, 'svc_enrichment_lookups_total', { service: 'wikidata' }) ?? 0;
        return asked > 0 && sample(text, 'svc_enrichment_failures_total', { service: 'wikidata' }) === asked;
      }, 'the failed Wikidata lookups counted');
      expect(sample(text, 'svc_enrichment_lookups_total', { service: 'musicbrainz' })).toBe(fakes.musicbrainz.requests.length);
      expect(fakes.musicbrainz.requests.length).toBeGreaterThan(0);
      expect(sample(text, 'svc_enrichment_failures_total', { service: 'musicbrainz' })).toBeUndefined();
      const wikidataLookups = sample(text, 'svc_enrichment_lookups_total', { service: 'wikidata' }) ?? 0;
      expect(wikidataLookups).toBeGreaterThan(0);
      expect(sample(text, 'svc_enrichment_failures_total', { service: 'wikidata' })).toBe(wikidataLookups);
      expect(sample(text, 'svc_listeners', { channel: 'main' })).toBe(3);
    } finally {
      await server.close();
      await fakes.close();
    }
  });
});
