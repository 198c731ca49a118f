import { complementWarnings, type ComplementPlay } from '../../../src/playlog/complement';

// The sound recording performance complement (docs/play-log.md): warnings at exactly the 4th
// play from one release and the 5th by one featured artist within 3 hours, or the 3rd and 4th in
// a row; never before.

const start = Date.UTC(2026, 10, 27, 12);
const play = (minute: number, artist: string, album: string, group?: string): ComplementPlay => ({
  startedAt: new Date(start + minute * 60_000).toISOString(),
  metadata: { artist, title: `t${minute}`, album, ...(group ? { musicbrainzreleasegroupid: group } : {}) },
});

/** The warnings after each play of the list, as the live check sees them. */
const warningsAlong = (plays: ComplementPlay[]) => plays.map((_, index) => complementWarnings(plays.slice(0, index + 1)));

describe('complementWarnings', () => {
  it('When a 4th play from one release comes within 3 hours (not in a row), then it warns at the 4th, not before', () => {
    const plays = [play(0, 'A', 'R'), play(10, 'B', 'X'), play(20, 'C', 'R'), play(30, 'D', 'Y'), play(40, 'E', 'R'), play(50, 'F', 'Z'), play(60, 'G', 'R')];
    const along = warningsAlong(plays);
    expect(along.slice(0, 6).every((warnings) => warnings.length === 0)).toBe(true);
    expect(along[6]).toEqual([expect.stringContaining('4 plays from release "R" within 3 hours')]);
  });

  it('When a 3rd play in a row is from one release, then it warns at the 3rd', () => {
    const along = warningsAlong([play(0, 'A', 'R'), play(5, 'B', 'R'), play(10, 'C', 'R')]);
    expect(along.map((warnings) => warnings.length)).toEqual([0, 0, 1]);
    expect(along[2]?.[0]).toContain('3 plays in a row from release "R"');
  });

  it('When a 5th play by one artist comes within 3 hours (not in a row), then it warns at the 5th, not before', () => {
    const plays = [0, 1, 2, 3, 4].flatMap((n) => [play(n * 20, 'Artist', `Album ${n}`), play(n * 20 + 10, `Other ${n}`, `Other album ${n}`)]).slice(0, 9);
    const along = warningsAlong(plays);
    expect(along.slice(0, 8).every((warnings) => warnings.length === 0)).toBe(true);
    expect(along[8]).toEqual([expect.stringContaining('5 plays by artist "Artist" within 3 hours')]);
  });

  it('When a 4th play in a row is by one artist, then it warns at the 4th', () => {
    const along = warningsAlong([play(0, 'A', 'R1'), play(5, 'A', 'R2'), play(10, 'A', 'R3'), play(15, 'A', 'R4')]);
    expect(along.map((warnings) => warnings.length)).toEqual([0, 0, 0, 1]);
  });

  it('When earlier plays are more than 3 hours before, then they do not count', () => {
    const plays = [play(0, 'A', 'R'), play(10, 'B', 'R'), play(20, 'C', 'R'), play(200, 'D', 'R')];
    expect(complementWarnings(plays.slice(0, 3).concat(play(215, 'D', 'X'), play(230, 'E', 'R')))).toEqual([]);
  });

  it('When the release group is known, then it decides over the album name (a single and the album are two releases)', () => {
    const plays = [play(0, 'A', 'Same', 'g1'), play(5, 'B', 'Same', 'g2'), play(10, 'C', 'Same', 'g3')];
    expect(complementWarnings(plays)).toEqual([]);
  });
});
