import { createHash } from 'node:crypto';
import {
  FUZZY_THRESHOLD,
  canReachThreshold,
  fuzzyScore,
  normaliseName,
  readRequestText,
  requestFulfilledBy,
  requestTrackId,
  similarity,
  type SongRequest,
} from '../../../src/domain/song-request';

// The pure rules of song requests (docs/song-requests.md), with the facts of What's Now Playing's
// queue (whatsnowplaying/whats-now-playing nowplaying/trackrequests.py): the chat formats it
// reads, the track_id, and the order of its matching (exact, normalised, fuzzy at 85).

function queued(id: number, artist: string | null, title: string | null): SongRequest {
  return {
    id,
    requester: `viewer${id}`,
    artist,
    title,
    normalizedArtist: normaliseName(artist),
    normalizedTitle: normaliseName(title),
    origin: 'lumia',
    userPlatform: null,
    externalId: null,
    userInput: null,
    requestedFor: null,
    createdAt: id,
  };
}

describe('song requests (pure rules)', () => {
  it('When names differ only in case, accents, lookalike letters, quotes, punctuation or spaces, then they normalise alike', () => {
    expect(normaliseName('Sigur Rós')).toBe('sigurros');
    expect(normaliseName('  SIGUR  ROS!')).toBe('sigurros');
    expect(normaliseName('ΛVΛLΛNCHΞS')).toBe(normaliseName('AVALANCHΞS'));
    expect(normaliseName('Don’t')).toBe(normaliseName("Don't"));
    expect(normaliseName(null)).toBe('');
  });

  it('When a track id is asked, then it is sha256 of "normalised artist|normalised title"', () => {
    expect(requestTrackId('Radiohead', 'Creep')).toBe(createHash('sha256').update('radiohead|creep').digest('hex'));
    expect(requestTrackId('RADIOHEAD ', 'creep!')).toBe(requestTrackId('Radiohead', 'Creep'));
  });

  it.each([
    ['Nirvana - Breed', 'Nirvana', 'Breed', null],
    ['Nirvana-Breed', 'Nirvana', 'Breed', null],
    ['Nirvana - "Breed" for @dj', 'Nirvana', 'Breed', 'dj'],
    ['"Breed" - Nirvana', 'Nirvana', 'Breed', null],
    ['"Breed" by Nirvana for @dj', 'Nirvana', 'Breed', 'dj'],
    ['"Breed"', null, 'Breed', null],
    ['Nirvana', 'Nirvana', null, null],
  ])('When the chat line is %j, then it is read as artist %j, title %j, for %j', (line, artist, title, requestedFor) => {
    expect(readRequestText(line)).toEqual({ artist, title, requestedFor });
  });

  it('When a track plays, then an exact match wins over a normalised one, which wins over a fuzzy one, oldest first', () => {
    const queue = [queued(1, 'Massive Atack', 'Teardrop'), queued(2, 'massive attack', 'TEARDROP!'), queued(3, 'Massive Attack', 'Teardrop')];
    expect(requestFulfilledBy({ artist: 'Massive Attack', title: 'Teardrop' }, queue)?.id).toBe(3);
    expect(requestFulfilledBy({ artist: 'Massive Attack', title: 'Teardrop' }, queue.slice(0, 2))?.id).toBe(2);
    expect(requestFulfilledBy({ artist: 'Massive Attack', title: 'Teardrop' }, queue.slice(0, 1))?.id).toBe(1);
  });

  it('When nothing matches both names, then the artist alone and then the title alone are tried, as What’s Now Playing does', () => {
    expect(requestFulfilledBy({ artist: 'Nirvana', title: 'Breed' }, [queued(1, 'Nirvana', null)])?.id).toBe(1);
    expect(requestFulfilledBy({ artist: 'Someone', title: 'Breed' }, [queued(1, null, 'Breed')])?.id).toBe(1);
    expect(requestFulfilledBy({ artist: 'Radiohead', title: 'Creep' }, [queued(1, 'Nirvana', 'Breed')])).toBeUndefined();
  });

  it('When names are far apart or one is much shorter, then the fuzzy score stays under the threshold', () => {
    expect(similarity('abba', 'a')).toBeLessThan(50);
    expect(similarity('Massive Attack', 'Massive Atack')).toBeGreaterThanOrEqual(90);
    // WRatio: the same words in another order are token_ratio 100, weighted 0.95.
    expect(similarity('Attack Massive', 'Massive Attack')).toBe(95);
    expect(fuzzyScore({ artist: 'Radiohead', title: 'Creep' }, { artist: 'Nirvana', title: 'Breed' })).toBeLessThan(85);
    expect(fuzzyScore({ artist: 'please play Radiohead', title: 'Creep' }, { artist: 'Radiohead', title: 'Creep' })).toBeGreaterThanOrEqual(85);
  });

  it('When the request says "Weird Al" in quotes before the dash, then it is read as What’s Now Playing reads it: that artist, that title', () => {
    expect(readRequestText('"Weird Al" Yankovic - Amish Paradise')).toEqual({ artist: '"Weird Al" Yankovic', title: 'Amish Paradise', requestedFor: null });
    expect(readRequestText('"weird al" yankovic - "White & Nerdy" for @dj')).toEqual({
      artist: '"Weird Al" yankovic',
      title: 'White & Nerdy',
      requestedFor: 'dj',
    });
    // WNP's title-artist separator is the class [-by]+: "--" separates too.
    expect(readRequestText('"Breed" -- Nirvana')).toEqual({ artist: 'Nirvana', title: 'Breed', requestedFor: null });
  });

  it('When a near match scores 85 or more by WNP’s WRatio, then it is fulfilled (an extra "The", a longer artist credit)', () => {
    expect(similarity('The Beatles', 'Beatles')).toBe(90);
    expect(fuzzyScore({ artist: 'The Beatles', title: 'Let It Be' }, { artist: 'Beatles', title: 'Let It Be' })).toBe(96);
    const queue = [queued(1, 'Beatles', 'Let It Be')];
    expect(requestFulfilledBy({ artist: 'The Beatles', title: 'Let It Be' }, queue)?.id).toBe(1);
    expect(fuzzyScore({ artist: 'The Chemical Brothers', title: 'Galvanize' }, { artist: 'Chemical Brothers', title: 'Galvanise' })).toBeGreaterThanOrEqual(85);
  });

  // The shortcut that keeps made-up long requests from costing a full score (issue 54 M5) must
  // never skip a request that could have matched.
  it('When a request cannot reach the threshold by length, then its full fuzzy score is below the threshold too', () => {
    const names = [
      'Nirvana',
      'Breed',
      'Massive Attack',
      'Teardrop',
      'play Teardrop please',
      'Teardrop (Remastered 2006 Version)',
      'A',
      'Abba',
      'x'.repeat(60),
      '  ',
      'Sigur Rós',
    ];
    let skipped = 0;
    for (const artist of names)
      for (const title of names)
        for (const played of [
          { artist: 'Massive Attack', title: 'Teardrop' },
          { artist: 'Massive Attack' },
          { title: 'play Teardrop please' },
          { title: 'Abba' },
        ]) {
          const request = { artist, title };
          if (canReachThreshold(played, request)) continue;
          skipped++;
          expect(fuzzyScore(played, request)).toBeLessThan(FUZZY_THRESHOLD);
        }
    expect(skipped).toBeGreaterThan(50);
    expect(canReachThreshold({ artist: 'Massive Attack', title: 'Teardrop' }, { artist: 'Massive Attack', title: 'Teardropp' })).toBe(true);
  });
});
