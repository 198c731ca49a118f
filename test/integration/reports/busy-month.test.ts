import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { seedBusyMonth, type BusyMonth } from '../../../bench/lib/busy-month';
import type { ReportFormatName } from '../../../src/reports/format';
import { makeTempDir } from '../../helpers/temp-dir';

// A month of a busy station (30 days, 400 plays a day, 200,000 sessions; bench/lib/busy-month.js)
// through every format from the real SQLite store (the build in dist/), in a process whose heap
// may not pass OLD_SPACE_MIB: the sessions alone, held as objects, would take several times that.
// Every tenth play has no kept count, so the census counts those from all 200,000 sessions.

const OLD_SPACE_MIB = 40;
const WRITER = join(__dirname, '../../fixtures/reports/write-month.js');

interface Written {
  format: ReportFormatName;
  problems: number;
  musicPlays: number;
  bytes: number;
  lines: number;
}

describe('reports of a busy month', () => {
  const temp = makeTempDir();
  let month: BusyMonth;
  let written: Written[];
  beforeAll(async () => {
    const file = join(temp.dir, 'busy.db');
    month = seedBusyMonth(file, { nullEvery: 10 });
    const { stdout } = await promisify(execFile)(process.execPath, [`--max-old-space-size=${OLD_SPACE_MIB}`, WRITER, file], { timeout: 170_000 });
    written = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Written);
  }, 180_000);
  afterAll(() => temp.cleanup());

  it('When every format is written for the month with a heap capped at 40 MiB, then each file is whole and has no problem', () => {
    expect(written.map((file) => file.format)).toEqual(['soundexchange', 'npr-playlist', 'npr-streams', 'ppl', 'prs', 'bmi']);
    for (const file of written) {
      expect(file).toMatchObject({ problems: 0, musicPlays: month.musicPlays });
      const expected = expectedLines(file.format, month);
      if (expected === undefined) expect(file.lines).toBeGreaterThan(month.recordings);
      else expect(file.lines).toBe(expected);
    }
    // The streaming log alone is larger than the heap allowed.
    expect(written.find((file) => file.format === 'npr-streams')?.bytes).toBeGreaterThan(16 * 1024 * 1024);
  });
});

/** Lines of each file for the month: the header where it has one, one per play, recording or session. */
function expectedLines(format: ReportFormatName, month: BusyMonth): number | undefined {
  const lines: Record<ReportFormatName, number | undefined> = {
    soundexchange: month.recordings,
    'npr-playlist': 1 + month.musicPlays,
    'npr-streams': month.sessions,
    ppl: 12,
    prs: 1 + month.musicPlays,
    bmi: 2 + month.musicPlays,
  };
  return lines[format];
}
