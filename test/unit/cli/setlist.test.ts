import { csvRow, parseWhen, setlistLine } from '../../../src/cli/setlist';

// The pure parts of `svc history`: WHEN, the text line and RFC 4180 rows.

describe('parseWhen', () => {
  const now = new Date('2026-11-22T22:00:00.000Z');

  it.each([
    ['90m', '2026-11-22T20:30:00.000Z'],
    ['2h', '2026-11-22T20:00:00.000Z'],
    ['1d', '2026-11-21T22:00:00.000Z'],
    ['1w', '2026-11-15T22:00:00.000Z'],
    ['2026-11-22T20:00:00Z', '2026-11-22T20:00:00.000Z'],
    ['2026-11-22T21:00:00+01:00', '2026-11-22T20:00:00.000Z'],
  ])('When WHEN is %s, then it is %s', (when, iso) => {
    expect(parseWhen(when, now)).toBe(iso);
  });

  it('When WHEN names no offset, then it is local time', () => {
    const local = new Date(2026, 10, 22, 20, 15);
    expect(parseWhen('2026-11-22T20:15', now)).toBe(local.toISOString());
  });

  it.each(['yesterday', '2h ago', '-2h', '2026-13-01', '2026-11-22T25:00', ''])('When WHEN is %j, then it is refused', (when) => {
    expect(parseWhen(when, now)).toBeUndefined();
  });
});

describe('setlistLine', () => {
  it('When artist or title is missing, then the line keeps what there is, and a bare record shows its dbid', () => {
    expect(setlistLine({ title: 'Only Title', received_at: 'garbage' })).toBe('--:--  Only Title');
    expect(setlistLine({ dbid: 7, received_at: 'garbage' })).toBe('--:--  untitled #7');
  });
});

describe('csvRow', () => {
  it('When a value is a list, then its elements join with "; "; numbers stay numbers; a missing value is empty', () => {
    expect(csvRow({ received_at: 'T', artist: 'A', isrc: ['GBAAA9800001', 'GBAAA9800002'], duration: 330 })).toBe(
      `T,A,,,,,GBAAA9800001; GBAAA9800002,330${','.repeat(11)}`,
    );
  });

  it('When a field holds a comma, a quote, CR or LF, then it is quoted with its quotes doubled (RFC 4180 section 2)', () => {
    expect(csvRow({ artist: 'a,b', title: 'say "x"', album: 'one\rtwo' })).toBe(`,"a,b","say ""x""","one\rtwo",,,,${','.repeat(11)}`);
  });
});
