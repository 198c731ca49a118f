import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

// The check that keeps the tests on signals (.ci/check-test-timing.js, `npm run check:timing`):
// lines it must catch, and lines it must let pass. Each line is scanned as a file of its own.

interface TimingProblem {
  text: string;
  message: string;
}
interface TimingCheck {
  check(relative: string, source: string, names: Set<string>): { problems: TimingProblem[] };
  durationNames(sources: string[]): Set<string>;
}

const load = createRequire(__filename);
const timing = load(path.join(__dirname, '..', '..', '..', '.ci', 'check-test-timing.js')) as TimingCheck;

/** The problems the check reports for `source`, scanned as `relative`. */
function problemsOf(source: string, relative = 'test/integration/example.test.ts'): TimingProblem[] {
  return timing.check(relative, source, timing.durationNames([source])).problems;
}

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'timing-check');

/** The samples of a fixture file: [what, source] per `## what` heading (the lines are kept out of test/'s .ts files, which the check scans). */
function samples(file: string): Array<[string, string]> {
  const text = readFileSync(path.join(FIXTURES, file), 'utf8');
  return text
    .split(/^## /m)
    .slice(1)
    .map((part): [string, string] => {
      const [what = '', ...lines] = part.split('\n');
      return [what, lines.join('\n').trim()];
    });
}

const caught = samples('caught.txt');
const passed = samples('passed.txt');

describe('.ci/check-test-timing.js', () => {
  it.each(caught)('When a test has %s, then the check fails on it', (_what, source) => {
    expect(problemsOf(source)).toHaveLength(1);
  });

  it.each(passed)('When a test has %s, then the check lets it pass', (_what, source) => {
    expect(problemsOf(source)).toEqual([]);
  });

  it('When the named real-time helper waits, then the check lets it pass', () => {
    const source = readFileSync(path.join(FIXTURES, 'real-time-helper.txt'), 'utf8');
    expect(problemsOf(source, path.join('test', 'helpers', 'real-time.ts'))).toEqual([]);
    expect(problemsOf(source, path.join('test', 'helpers', 'other.ts'))).toHaveLength(1);
  });

  it('When it fails on a line, then it names the line', () => {
    const sample = caught.find(([what]) => what === 'a fixed sleep')?.[1] ?? '';
    const [problem] = problemsOf(`it('x', async () => {\n${sample}\n});`);
    expect(problem?.message).toMatch(/^test\/integration\/example\.test\.ts:2: a fixed wait of 200 ms/);
    expect(problem?.text).toBe(sample);
  });

  it('When the fixtures are read, then each has its samples', () => {
    expect(caught.length).toBeGreaterThan(10);
    expect(passed.length).toBeGreaterThan(10);
  });
});
