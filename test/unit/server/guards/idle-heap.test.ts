import { ATTEMPTS_PER_SPELL, IDLE_HEAP_DEFAULTS, QuietSpell, type LoopReading } from '../../../../src/server/guards/idle-heap';

// When the server gives back the young generation (src/server/guards/idle-heap.ts): once per quiet
// spell after work, after quietMs of quiet, again when V8 kept it, never with an audience connected.
// test/integration/idle-heap.test.ts checks that the collection really shrinks V8's young generation.

const options = { audience: 100, quietMs: 6_000, quietUtilization: 0.02 };
const quiet = (connections = 0): LoopReading => ({ utilization: 0.001, elapsedMs: 1_000, connections });
const busy = (connections = 0): LoopReading => ({ utilization: 0.5, elapsedMs: 1_000, connections });

/**
 * The readings at which the spell said to collect, counted from 1; `gaveBack` says what each
 * collection did (V8 gives the young generation back unless told otherwise).
 */
function collectionsAt(readings: LoopReading[], gaveBack: (attempt: number) => boolean = () => true): number[] {
  const spell = new QuietSpell(options);
  const at: number[] = [];
  readings.forEach((reading, index) => {
    if (!spell.observe(reading)) return;
    at.push(index + 1);
    spell.collected(gaveBack(at.length));
  });
  return at;
}

const quietFor = (readings: number) => Array.from({ length: readings }, () => quiet());

describe('QuietSpell', () => {
  test('collects once the server has been quiet for quietMs after start-up, and once only', () => {
    expect(collectionsAt(quietFor(20))).toEqual([6]);
  });

  test('a busy interval starts the quiet time again and earns another collection', () => {
    const readings = [...Array.from({ length: 8 }, () => quiet()), busy(), busy(), ...Array.from({ length: 7 }, () => quiet())];
    expect(collectionsAt(readings)).toEqual([6, 16]);
  });

  test('work shorter than quietMs between quiet readings only delays the collection', () => {
    const readings = [quiet(), quiet(), quiet(), busy(), quiet(), quiet(), quiet(), quiet(), quiet(), quiet()];
    expect(collectionsAt(readings)).toEqual([10]);
  });

  test('an audience keeps the young generation; the collection comes when it has gone', () => {
    const readings = [busy(), ...Array.from({ length: 10 }, () => quiet(100)), quiet(99)];
    expect(collectionsAt(readings)).toEqual([12]);
  });

  test('when V8 kept the young generation, tries again after another quietMs, up to ATTEMPTS_PER_SPELL times', () => {
    expect(collectionsAt(quietFor(40), (attempt) => attempt === 2)).toEqual([6, 12]);
    expect(ATTEMPTS_PER_SPELL).toBe(3);
    expect(collectionsAt(quietFor(40), () => false)).toEqual([6, 12, 18]);
  });

  test('work after the attempts ran out earns new ones', () => {
    const readings = [...quietFor(20), busy(), ...quietFor(20)];
    expect(collectionsAt(readings, () => false)).toEqual([6, 12, 18, 27, 33, 39]);
  });

  test('a reading just under the threshold counts as quiet, one at it as work', () => {
    const spell = new QuietSpell({ ...options, quietMs: 1_000 });
    expect(spell.observe({ utilization: 0.0199, elapsedMs: 1_000, connections: 0 })).toBe(true);
    spell.collected(true);
    expect(spell.observe({ utilization: 0.02, elapsedMs: 1_000, connections: 0 })).toBe(false);
    expect(spell.observe({ utilization: 0.0199, elapsedMs: 1_000, connections: 0 })).toBe(true);
  });

  test('the defaults wait longer than V8 measures its allocation rate over (5 s)', () => {
    expect(IDLE_HEAP_DEFAULTS.quietMs).toBeGreaterThan(5_000);
    expect(IDLE_HEAP_DEFAULTS.checkMs).toBeLessThan(IDLE_HEAP_DEFAULTS.quietMs);
  });
});
