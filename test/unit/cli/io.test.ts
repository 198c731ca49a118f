import { colorEnabled } from '../../../src/cli/io';

describe('colorEnabled', () => {
  test.each([
    // Rows: env, stdout is a TTY, --json, colour expected (docs/decisions.md "Command-line environment").
    [{}, true, false, true],
    [{}, false, false, false],
    [{}, true, true, false],
    [{ NO_COLOR: '1' }, true, false, false],
    [{ NO_COLOR: '' }, true, false, true],
    [{ NO_COLOR: '' }, false, false, false],
    [{ FORCE_COLOR: '1' }, false, false, true],
    [{ FORCE_COLOR: '3' }, false, false, true],
    [{ FORCE_COLOR: '' }, false, false, false],
    [{ FORCE_COLOR: '' }, true, false, true],
    [{ FORCE_COLOR: '0' }, true, false, false],
    [{ FORCE_COLOR: 'false' }, true, false, false],
    [{ FORCE_COLOR: 'FALSE' }, true, false, false],
    [{ FORCE_COLOR: '1', NO_COLOR: '1' }, false, false, false],
    [{ FORCE_COLOR: '1', NO_COLOR: '1' }, true, false, false],
    [{ FORCE_COLOR: '', NO_COLOR: '1' }, true, false, false],
    [{ FORCE_COLOR: '', NO_COLOR: '' }, false, false, false],
    [{ FORCE_COLOR: '1', NO_COLOR: '' }, false, false, true],
    [{ FORCE_COLOR: '1' }, true, true, false],
  ])('When env is %j, TTY %s, --json %s, then colour is %s', (env, tty, json, expected) => {
    expect(colorEnabled(env, tty, json)).toBe(expected);
  });
});
