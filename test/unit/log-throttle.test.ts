import { throttledLog } from '../../src/log';

// One line per kind per interval, with a count; kinds that name a source are each reported at once
// (src/log.ts throttledLog, docs/security.md "Guessing the secret").
describe('throttledLog', () => {
  it('When two addresses fail within the same minute, then each first failure is written at once', () => {
    const lines: string[] = [];
    let clock = 0;
    const report = throttledLog(
      (line) => lines.push(line),
      60_000,
      () => clock,
    );
    report('failed-authentication door 198.51.100.1', 'first from .1');
    clock = 10;
    report('failed-authentication door 198.51.100.1', 'again from .1');
    report('failed-authentication door 198.51.100.2', 'first from .2');
    expect(lines).toEqual(['first from .1', 'first from .2']);
    clock = 60_000;
    report('failed-authentication door 198.51.100.1', 'later from .1');
    expect(lines[2]).toBe('later from .1 (1 more since the last report)');
  });

  it('When more kinds arrive than it remembers, then the newest share one line and quiet kinds make room again', () => {
    const lines: string[] = [];
    let clock = 0;
    const report = throttledLog(
      (line) => lines.push(line),
      1_000,
      () => clock,
      2,
    );
    report('a', 'a');
    report('b', 'b');
    report('c', 'c');
    report('d', 'd');
    expect(lines).toEqual(['a', 'b', 'c']);
    clock = 1_000;
    report('e', 'e');
    expect(lines).toEqual(['a', 'b', 'c', 'e']);
  });
});
