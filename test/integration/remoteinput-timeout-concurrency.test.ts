import { asObject, getWithQuery, postJson, request } from '../helpers/http';
import { delayingEnricher } from '../helpers/enrichers';
import { startTestServer } from '../helpers/test-server';
import { storedCount } from '../helpers/stored-count';

describe('408 when processing exceeds processingTimeoutSeconds', () => {
  it('When a provider is slower than the budget, then 408, nothing is stored, and /v1/last is unchanged', async () => {
    const enricher = delayingEnricher((track) => (track.title === 'Slow' ? 1500 : 0), { genre: 'late' }, { ignoreAbort: true });
    const t = await startTestServer({ config: { processingTimeoutSeconds: 0.3, enrichment: { deadlineSeconds: 5 } }, plan: [[enricher]] });
    try {
      const first = await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Fast' });
      expect(first.status).toBe(200);
      const lastBefore = (await request(`${t.url}/v1/last`)).text;

      const slow = await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Slow' });
      expect(slow.status).toBe(408);
      expect(slow.json).toEqual({ error: 'Metadata processing exceeded 0.3 seconds' });

      // The abandoned enrichment finishes after the 408: it must still not store anything.
      await enricher.finished((track) => track.title === 'Slow');
      await new Promise((resolve) => setImmediate(resolve));
      expect(await storedCount(t.server.tracks)).toBe(1);
      expect((await request(`${t.url}/v1/last`)).text).toBe(lastBefore);
    } finally {
      await t.close();
    }
  });

  it('When enrichment hits its own deadline first, then the submission is stored with what arrived', async () => {
    const t = await startTestServer({
      config: { processingTimeoutSeconds: 5, enrichment: { deadlineSeconds: 0.2 } },
      plan: [[delayingEnricher(() => 0, { album: 'In time' }), delayingEnricher(() => 3000, { genre: 'Too late' })]],
    });
    try {
      const res = await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'T' });
      expect(res.status).toBe(200);
      expect(asObject(res.json).processed_metadata).toEqual({
        artist: 'A',
        title: 'T',
        album: 'In time',
        enrichment_sources: { album: 'test-delay' },
      });
    } finally {
      await t.close();
    }
  });
});

describe('concurrent submissions', () => {
  it('When 200 submissions arrive at once, then there are 200 distinct dbids and each response carries its own input', async () => {
    const t = await startTestServer({ plan: [[delayingEnricher(() => Math.floor(Math.random() * 20))]] });
    try {
      const responses = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          i % 2 === 0
            ? postJson(`${t.url}/v1/remoteinput`, { artist: `Artist ${i}`, title: `Title ${i}`, track: i })
            : getWithQuery(`${t.url}/v1/remoteinput`, { artist: `Artist ${i}`, title: `Title ${i}`, track: String(i) }),
        ),
      );
      const dbids = new Set<number>();
      responses.forEach((res, i) => {
        expect(res.status).toBe(200);
        const body = asObject(res.json);
        dbids.add(body.dbid as number);
        expect(body.processed_metadata).toEqual({ artist: `Artist ${i}`, title: `Title ${i}`, track: i });
      });
      expect(dbids.size).toBe(200);
      expect(await storedCount(t.server.tracks)).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('When an earlier slow submission finishes after a newer one, then the newer one stays current', async () => {
    const enricher = delayingEnricher((track) => (track.title === 'Older' ? 800 : 0));
    const t = await startTestServer({ plan: [[enricher]] });
    try {
      const older = postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Older' });
      // The older submission has arrived (its arrival number is taken) once its enrichment began.
      await enricher.started((track) => track.title === 'Older');
      const newer = await postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'Newer' });
      expect(asObject((await request(`${t.url}/v1/last`)).json).title).toBe('Newer');
      const olderResult = await older;
      expect(olderResult.status).toBe(200);
      // The older one is stored (its dbid taken first: dbid order is arrival order) but never becomes current again.
      expect(asObject(olderResult.json).dbid).toBeLessThan(asObject(newer.json).dbid as number);
      expect(asObject((await request(`${t.url}/v1/last`)).json).title).toBe('Newer');
      await t.restart();
      expect(asObject((await request(`${t.server.url}/v1/last`)).json).title).toBe('Newer');
    } finally {
      await t.close();
    }
  });
});
