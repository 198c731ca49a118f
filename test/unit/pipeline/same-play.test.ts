import { isSamePlay } from '../../../src/pipeline/same-play';
import type { TrackRecord } from '../../../src/domain/track';

const at = Date.parse('2026-01-01T20:00:00.000Z');
const current: TrackRecord = { dbid: 7, receivedSeq: 7, receivedAt: new Date(at).toISOString(), metadata: { artist: 'Massive Attack', title: 'Teardrop' } };

describe('isSamePlay', () => {
  it('When artist and title match after trimming and ignoring case, within the window, then it is the same play', () => {
    expect(isSamePlay(current, { artist: ' massive ATTACK ', title: 'teardrop' }, at + 599_000, 600)).toBe(true);
  });
  it('When the window has passed, the title differs, a name is missing, or the rule is off, then it is a new play', () => {
    expect(isSamePlay(current, { artist: 'Massive Attack', title: 'Teardrop' }, at + 601_000, 600)).toBe(false);
    expect(isSamePlay(current, { artist: 'Massive Attack', title: 'Angel' }, at, 600)).toBe(false);
    expect(isSamePlay(current, { isrc: 'GBAAA9800343', title: 'Teardrop' }, at, 600)).toBe(false);
    expect(isSamePlay(current, { artist: 'Massive Attack', title: 'Teardrop' }, at, 0)).toBe(false);
    expect(isSamePlay(null, { artist: 'Massive Attack', title: 'Teardrop' }, at, 600)).toBe(false);
  });
});
