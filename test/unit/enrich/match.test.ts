import { chooseRelease, normalize, pickMatch, similarity } from '../../../src/enrich/match';
import { VARIOUS_ARTISTS_ID, type MbArtistCredit, type MbRecording, type MbRelease } from '../../../src/enrich/musicbrainz-decode';

const credit = (...names: string[]): MbArtistCredit[] =>
  names.map((name, index) => ({
    name,
    joinphrase: index < names.length - 1 ? ' & ' : '',
    artist: { id: `00000000-0000-4000-8000-00000000000${index}`, name },
  }));

const release = (id: string, title: string, options: Partial<MbRelease> & { primary?: string; secondary?: string[] } = {}): MbRelease => ({
  id,
  title,
  status: options.status ?? 'Official',
  ...(options.date ? { date: options.date } : {}),
  'artist-credit': options['artist-credit'] ?? credit('Massive Attack'),
  'release-group': { id: `${id}-rg`, 'primary-type': options.primary ?? 'Album', ...(options.secondary ? { 'secondary-types': options.secondary } : {}) },
});

const recording = (id: string, title: string, artists: MbArtistCredit[], releases: MbRelease[], score = 100): MbRecording => ({
  id,
  title,
  score,
  'artist-credit': artists,
  releases,
});

describe('normalize', () => {
  it('When text differs only in case, accents, punctuation and spacing, then the normal forms are equal', () => {
    expect(normalize('  Björk ')).toBe(normalize('bjork'));
    expect(normalize('AC/DC')).toBe(normalize('ac dc'));
    expect(normalize("Don't Stop Me Now!")).toBe(normalize('dont stop me now'));
    expect(normalize('Simon & Garfunkel')).toBe(normalize('Simon and Garfunkel'));
    expect(normalize('The Prodigy')).toBe(normalize('Prodigy'));
  });

  it('When a title or artist carries a "feat." part, then it is ignored', () => {
    expect(normalize('Get Lucky (feat. Pharrell Williams)')).toBe('get lucky');
    expect(normalize('Get Lucky [ft. Pharrell]')).toBe('get lucky');
    expect(normalize('Daft Punk feat. Pharrell Williams')).toBe('daft punk');
    expect(normalize('Daft Punk featuring Pharrell Williams')).toBe('daft punk');
  });
});

describe('similarity', () => {
  it('When the strings are equal after normalising, then it is 1; when unrelated, then it is low', () => {
    expect(similarity('Teardrop', 'TEARDROP')).toBe(1);
    expect(similarity('Glory Box', 'Glory Days')).toBeLessThan(0.85);
    expect(similarity('', '')).toBe(0);
  });

  const scoreOf = (artist: string, title: string, candidate: MbRecording) => pickMatch({ artist, title }, [candidate])?.score;

  it('When only a bracketed version differs, then the title still matches, a little below an exact one', () => {
    const score = scoreOf('Massive Attack', 'Teardrop (Original Mix)', recording('r', 'Teardrop', credit('Massive Attack'), []));
    expect(score).toBeGreaterThanOrEqual(0.85);
    expect(score).toBeLessThan(1);
  });

  it('When the submitted artist is one of several credited artists, then it matches the credit', () => {
    const getLucky = recording('g', 'Get Lucky', credit('Daft Punk', 'Pharrell Williams'), []);
    expect(scoreOf('Daft Punk', 'Get Lucky', getLucky)).toBe(1);
    expect(scoreOf('Daft Punk & Pharrell Williams', 'Get Lucky', getLucky)).toBe(1);
    expect(scoreOf('Portishead', 'Glory Box', recording('t', 'Glory Box', credit('Portishead Tribute Band'), []))).toBeUndefined();
  });
});

describe('chooseRelease', () => {
  const album = release('a', 'Mezzanine', { date: '1998-04-20' });
  const single = release('s', 'Teardrop', { primary: 'Single', date: '1998-05-04' });
  const compilation = release('c', 'Collected', { secondary: ['Compilation'], date: '2006-03-27' });
  const variousArtists = release('v', 'Trip Hop Classics', {
    secondary: ['Compilation'],
    'artist-credit': [{ name: 'Various Artists', artist: { id: VARIOUS_ARTISTS_ID, name: 'Various Artists' } }],
  });
  const bootleg = release('b', 'Live in Bristol', { status: 'Bootleg' });

  it('When a track is on an official album, a single and compilations, then the album is chosen', () => {
    expect(chooseRelease([variousArtists, compilation, single, album])?.id).toBe('a');
  });

  it('When two releases are compared, then album > single > own compilation > various-artists compilation, and bootlegs lose', () => {
    const better = (a: MbRelease, b: MbRelease) => [chooseRelease([a, b])?.id, chooseRelease([b, a])?.id];
    expect(better(album, single)).toEqual(['a', 'a']);
    expect(better(single, compilation)).toEqual(['s', 's']);
    expect(better(compilation, variousArtists)).toEqual(['c', 'c']);
    expect(better(album, bootleg)).toEqual(['a', 'a']);
  });

  it('When an album name is given, then the release of that name wins even over an official album', () => {
    expect(chooseRelease([album, compilation], 'Collected')?.id).toBe('c');
  });

  it('When an album name is given and no release has it, then no release is chosen', () => {
    expect(chooseRelease([album, single], 'Blue Lines')).toBeUndefined();
  });

  it('When two releases rank the same, then the earlier one is chosen', () => {
    const reissue = release('r', 'Mezzanine', { date: '2018-04-20' });
    expect(chooseRelease([reissue, album])?.id).toBe('a');
  });
});

describe('pickMatch', () => {
  const massiveAttack = credit('Massive Attack');
  const album = release('a', 'Mezzanine');
  const vaCompilation = release('v', 'Trip Hop Classics', {
    secondary: ['Compilation'],
    'artist-credit': [{ name: 'Various Artists', artist: { id: VARIOUS_ARTISTS_ID, name: 'Various Artists' } }],
  });

  it('When the search ranks a compilation-only recording first, then the recording on the album wins', () => {
    const match = pickMatch({ artist: 'Massive Attack', title: 'Teardrop' }, [
      recording('r2', 'Teardrop', massiveAttack, [vaCompilation], 100),
      recording('r1', 'Teardrop', massiveAttack, [vaCompilation, album], 97),
    ]);
    expect(match?.recording.id).toBe('r1');
    expect(match?.release?.id).toBe('a');
  });

  it('When only weak candidates are found, then nothing matches', () => {
    expect(
      pickMatch({ artist: 'Portishead', title: 'Glory Box' }, [
        recording('x', 'Glory Days', credit('Portishead'), [album]),
        recording('y', 'Glory Box', credit('Portishead Tribute Band'), [album]),
      ]),
    ).toBeUndefined();
  });

  it('When the exact title exists besides a bracketed version, then the exact title wins over a better release', () => {
    const match = pickMatch({ artist: 'Massive Attack', title: 'Teardrop (Live)' }, [
      recording('studio', 'Teardrop', massiveAttack, [album]),
      recording('live', 'Teardrop (Live)', massiveAttack, [release('l', 'Live at Glastonbury', { secondary: ['Live'] })]),
    ]);
    expect(match?.recording.id).toBe('live');
  });

  it('When the album is given but the recording is on none of that name, then the recording matches without a release', () => {
    const match = pickMatch({ artist: 'Massive Attack', title: 'Teardrop', album: 'Heligoland' }, [recording('r1', 'Teardrop', massiveAttack, [album])]);
    expect(match?.recording.id).toBe('r1');
    expect(match?.release).toBeUndefined();
  });
});
