import { partialRatio, ratio, tokenSetRatio, weightedRatio } from '../../../src/domain/fuzzy-ratio';

// rapidfuzz's ratios as What's Now Playing scores requests with them (docs/song-requests.md
// "Fuzzy matching"); the expected values are the examples of rapidfuzz's own documentation
// (fuzz.ratio, fuzz.token_set_ratio, fuzz.partial_ratio_alignment) and the definitions there.

describe('fuzzy ratios (rapidfuzz’s, restated)', () => {
  it('When rapidfuzz’s documented examples are scored, then the same numbers come out', () => {
    expect(ratio('this is a test', 'this is a test!')).toBeCloseTo(96.5517, 3);
    expect(partialRatio('this is a test', 'this is a test!')).toBe(100);
    expect(tokenSetRatio('fuzzy was a bear', 'fuzzy fuzzy was a bear')).toBe(100);
    expect(tokenSetRatio('fuzzy was a bear but not a dog', 'fuzzy was a bear')).toBe(100);
    expect(tokenSetRatio('fuzzy was a bear but not a dog', 'fuzzy was a bear but not a cat')).toBeCloseTo(92.3077, 3);
    expect(partialRatio('a certain string', 'cetain')).toBeCloseTo(83.3333, 3);
  });

  it('When WRatio weighs, then similar lengths use the token ratios at 0.95, and longer ones the partial ratios at 0.9 (0.6 past 8 times)', () => {
    expect(weightedRatio('massive attack', 'attack massive')).toBe(95);
    expect(weightedRatio('the beatles', 'beatles')).toBe(90);
    // 1 char against 9: 0.6 scale; partial ratio 100, partial token ratio shares no word.
    expect(weightedRatio('a', 'abcdefghi')).toBeCloseTo(60, 5);
    expect(weightedRatio('', 'x')).toBe(0);
  });
});
