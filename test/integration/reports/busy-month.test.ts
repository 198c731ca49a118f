import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { seedBusyMonth, type BusyMonth } from '../../../bench/lib/busy-month';
import { REPORT_FORMATS, type ReportFormatName, type ReportRun } from '../../../src/reports/format';
import { FORMATS } from '../../../src/reports/formats';
import { inspectReport, renderReport } from '../../../src/reports/run-report';
import { storeReportSource } from '../../../src/reports/store-source';
import { openStore } from '../../../src/store/open-store';
import type { Store } from '../../../src/store/store';
import { makeRun, US_SETTINGS } from '../../helpers/reports';
import { makeTempDir } from '../../helpers/temp-dir';

// A month of a busy station (30 days, 400 plays a day, 200,000 sessions; bench/lib/busy-month.js)
// through every format from the real SQLite store: each file complete, and the heap never holds
// the month. Holding the sessions alone would take well over 100 MiB of objects.

const HEAP_GROWTH_LIMIT = 48 * 1024 * 1024;

describe('reports of a busy month', () => {
  const temp = makeTempDir();
  let store: Store;
  let month: BusyMonth;
  beforeAll(async () => {
    const file = join(temp.dir, 'busy.db');
    // Every tenth play has no kept count: the report counts those from the 200,000 sessions.
    month = seedBusyMonth(file, { nullEvery: 10 });
    store = await openStore(file, { maxImageBytes: 1024 * 1024 });
  }, 120_000);
  afterAll(async () => {
    await store.close();
    temp.cleanup();
  });

  const settings = { ...US_SETTINGS, timeZone: 'UTC' };
  const runOf = (format: ReportFormatName): ReportRun => makeRun(format, month.from, month.to, settings, format === 'npr-playlist' ? { channel: 'main' } : {});

  it.each(REPORT_FORMATS)(
    'When %s is written for the month, then the file is whole and the heap stays bounded',
    async (format) => {
      const run = runOf(format);
      const deps = { source: storeReportSource(store.plays), format: FORMATS[format], minSessionSeconds: 0 };
      const baseline = process.memoryUsage().heapUsed;
      let peak = baseline;
      const sample = () => (peak = Math.max(peak, process.memoryUsage().heapUsed));
      const facts = await inspectReport(deps, run, sample);
      let bytes = 0;
      let lines = 0;
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          bytes += chunk.length;
          for (const byte of chunk) if (byte === 10) lines++;
          sample();
          done();
        },
      });
      await pipeline(Readable.from(renderReport(deps, run, facts)), sink);
      expect(facts.problems).toBe(0);
      expect(facts.musicPlays).toBe(month.musicPlays);
      const expected = expectedLines(format, month);
      if (expected === undefined) expect(lines).toBeGreaterThan(month.recordings);
      else expect(lines).toBe(expected);
      expect(peak - baseline).toBeLessThan(HEAP_GROWTH_LIMIT);
      process.stderr.write(`${format}: ${(bytes / 1048576).toFixed(1)} MiB written, heap grew ${((peak - baseline) / 1048576).toFixed(1)} MiB at most\n`);
    },
    180_000,
  );
});

/** Lines of each file for the month: the header, one per play, recording or session (PRS: per recording and hour). */
function expectedLines(format: ReportFormatName, month: BusyMonth): number | undefined {
  const lines: Record<ReportFormatName, number | undefined> = {
    soundexchange: 1 + month.recordings,
    'npr-playlist': 1 + month.musicPlays,
    'npr-streams': month.sessions,
    ppl: 10,
    prs: undefined,
    bmi: 2 + month.musicPlays,
  };
  return lines[format];
}
