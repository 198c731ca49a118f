import { asObject, postJson } from '../helpers/http';
import { delayingEnricher } from '../helpers/enrichers';
import { startTestServer } from '../helpers/test-server';
import { storedCount } from '../helpers/stored-count';

describe('graceful shutdown', () => {
  it('When the server closes during a submission, then that submission finishes, is answered 200 and is stored', async () => {
    const enricher = delayingEnricher(() => 400, { album: 'Finished' });
    const t = await startTestServer({ plan: [[enricher]] });
    try {
      const inFlight = postJson(`${t.url}/v1/remoteinput`, { artist: 'A', title: 'In flight' });
      await enricher.started();
      const closing = t.server.close();
      const res = await inFlight;
      await closing;
      expect(res.status).toBe(200);
      expect(asObject(asObject(res.json).processed_metadata).album).toBe('Finished');
      await t.restart();
      expect(await storedCount(t.server.tracks)).toBe(1);
    } finally {
      await t.close();
    }
  });
});
