import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { sizedByNodeOptions } from '../../../src/app/young-generation';

// The young-generation cap of `svc serve` (src/app/young-generation.ts; docs/limits-and-load.md
// "What one record costs"): each case is its own node process (test/fixtures/gc/young-generation.js)
// running the built code in dist/, so the heap measured is that process's alone.

const SCRIPT = path.join(__dirname, '..', '..', 'fixtures', 'gc', 'young-generation.js');
const DIST = path.join(__dirname, '..', '..', '..', 'dist');
const MiB = 1024 * 1024;

function youngGeneration(cap: number | 'none'): { before: number; after: number } {
  const output = execFileSync(process.execPath, [SCRIPT, DIST, String(cap)], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return JSON.parse(output.trim()) as { before: number; after: number };
}

describe('capYoungGeneration', () => {
  it('When a process allocates like a busy server, then without the cap its young generation grows past 4 MiB, and with it stops there', () => {
    const free = youngGeneration('none');
    expect(free.before).toBeLessThan(4 * MiB);
    expect(free.after).toBeGreaterThan(4 * MiB);
    const capped = youngGeneration(4 * MiB);
    expect(capped.after).toBe(4 * MiB);
  });

  it('When the process was started with its own semi-space size, then that size stands', () => {
    expect(sizedByNodeOptions(['--max-semi-space-size=32'], '')).toBe(true);
    expect(sizedByNodeOptions([], '--inspect --max_semi_space_size=2')).toBe(true);
    expect(sizedByNodeOptions(['--min-semi-space-size=1'], '')).toBe(true);
    expect(sizedByNodeOptions(['--expose-gc'], '--max-old-space-size=512')).toBe(false);
  });
});
