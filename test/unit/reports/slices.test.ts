import type { ReportPlay } from '../../../src/reports/rows';
import { slicedSource } from '../../../src/reports/slices';
import { PLAYS, SESSIONS } from '../../fixtures/reports/play-log';
import { arraySource, makeRun, renderToText, US_SETTINGS } from '../../helpers/reports';

// A report in slices (docs/reports.md "Memory and speed"): between two pages of the log, whatever
// waits on the event loop runs. The signal is a setImmediate callback queued when the report
// starts: it must run while pages are still being read, not after the last.

const many: ReportPlay[] = Array.from({ length: 40 }, (_, i) => ({
  ...PLAYS[0],
  dbid: 1000 + i,
  started_at: new Date(Date.parse('2026-10-01T12:00:00.000Z') + i * 330_000).toISOString(),
  ended_at: new Date(Date.parse('2026-10-01T12:00:00.000Z') + i * 330_000 + 320_000).toISOString(),
}));

describe('reports in slices', () => {
  it.each([
    ['sliced', true],
    ['not sliced', false],
  ] as const)('When a report is written %s, then a waiting callback runs between its pages only when sliced', async (_name, sliced) => {
    let pagesRead = 0;
    const source = arraySource(many, SESSIONS);
    const counted = {
      ...source,
      plays: (query: Parameters<typeof source.plays>[0]) => {
        const pages = source.plays(query);
        return (async function* () {
          for await (const page of pages) {
            pagesRead++;
            yield page;
          }
        })();
      },
    };
    let pagesWhenItRan: number | undefined;
    setImmediate(() => {
      pagesWhenItRan = pagesRead;
    });
    const rendered = await renderToText(sliced ? slicedSource(counted) : counted, makeRun('npr-playlist', '2026-10-01', '2026-10-01', US_SETTINGS));
    expect(rendered.text.split('\n').filter(Boolean)).toHaveLength(41);
    const total = pagesRead;
    if (sliced) expect(pagesWhenItRan).toBeLessThan(total);
    else expect(pagesWhenItRan).toBeUndefined();
  });
});
