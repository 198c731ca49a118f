import type { Enricher } from '../../../src/enrich/enricher';
import { runEnrichers } from '../../../src/enrich/run-enrichers';
import { createLogger } from '../../../src/log';

function enricher(name: string, delayMs: number, fields: Record<string, string>, seen?: Record<string, unknown>[]): Enricher {
  return {
    name,
    enrich: (track, { signal }) =>
      new Promise((resolve, reject) => {
        seen?.push({ ...track });
        const timer = setTimeout(() => resolve({ fields }), delayMs);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('aborted'));
        });
      }),
  };
}

const failing: Enricher = { name: 'broken', enrich: () => Promise.reject(new Error('HTTP 503')) };

describe('runEnrichers', () => {
  it('When stages run, then each stage sees what earlier stages filled in', async () => {
    const seen: Record<string, unknown>[] = [];
    const outcome = await runEnrichers({ artist: 'A' }, [[enricher('first', 1, { album: 'B' })], [enricher('second', 1, { date: '2001' }, seen)]], {
      deadlineMs: 1000,
      logger: createLogger(() => {}),
    });
    expect(seen[0]).toEqual({ artist: 'A', album: 'B' });
    expect(outcome.added).toEqual({ album: 'B', date: '2001' });
    expect(outcome.sources).toEqual({ album: 'first', date: 'second' });
    expect(outcome.timedOut).toBe(false);
  });

  it('When the deadline passes, then what arrived in time is kept and the slow provider is abandoned', async () => {
    const started = Date.now();
    const outcome = await runEnrichers(
      { artist: 'A' },
      [[enricher('fast', 1, { album: 'B' }), enricher('slow', 10_000, { genre: 'G' })], [enricher('later', 1, { date: 'x' })]],
      { deadlineMs: 100, logger: createLogger(() => {}) },
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(outcome.added).toEqual({ album: 'B' });
    expect(outcome.timedOut).toBe(true);
  });

  it('When a provider fails, then the others still contribute and the failure is logged, not thrown', async () => {
    const lines: string[] = [];
    const outcome = await runEnrichers({ title: 'T' }, [[failing, enricher('ok', 1, { album: 'B' })]], {
      deadlineMs: 1000,
      logger: createLogger((line) => lines.push(line)),
    });
    expect(outcome.added).toEqual({ album: 'B' });
    expect(lines.join('\n')).toMatch(/broken failed: HTTP 503/);
  });

  it('When a provider offers a field the submission already has, then it is not among the additions', async () => {
    const outcome = await runEnrichers({ title: 'Submitted', album: '' }, [[enricher('p', 1, { title: 'Provider', album: 'Found' })]], {
      deadlineMs: 1000,
      logger: createLogger(() => {}),
    });
    expect(outcome.added).toEqual({ album: 'Found' });
    expect(outcome.sources).toEqual({ album: 'p' });
  });

  it('When two providers of one stage offer the same field, then plan order wins, not arrival order', async () => {
    const outcome = await runEnrichers({ title: 'T' }, [[enricher('slower', 30, { album: 'X' }), enricher('faster', 1, { album: 'Y' })]], {
      deadlineMs: 1000,
      logger: createLogger(() => {}),
    });
    expect(outcome.added.album).toBe('X');
  });
});
